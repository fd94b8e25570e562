// Command modproxy writes a file-based Go module proxy that serves this
// repository's public modules at one version, zipped exactly as the Go
// command would zip them from a release tag. The release check points
// GOPROXY at it (file://DIR) to install each module as a user would.
//
// Usage:
//
//	go run . -tree DIR -version VERSION -out PROXYDIR
//
// DIR is a tree of this repository holding only the files to publish, as
// `git archive` of a commit gives (.release/check packs one): every file
// in it goes into the zips, untracked and ignored ones included.
// .release/modules in it lists the public modules. A version already in
// PROXYDIR is replaced; the others stay listed.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

func main() {
	tree := flag.String("tree", "", "the repository tree to pack")
	version := flag.String("version", "", "the version of every module (vX.Y.Z)")
	out := flag.String("out", "", "the proxy directory to write")
	flag.Parse()
	if *tree == "" || *out == "" || !semver.IsValid(*version) {
		fmt.Fprintln(os.Stderr, "usage: modproxy -tree DIR -version vX.Y.Z -out PROXYDIR")
		os.Exit(2)
	}
	if err := run(*tree, *version, *out); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

func run(tree, version, out string) error {
	dirs, err := modules(filepath.Join(tree, ".release", "modules"))
	if err != nil {
		return err
	}
	for _, d := range dirs {
		dir := filepath.Join(tree, d)
		gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			return err
		}
		path := modfile.ModulePath(gomod)
		if path == "" {
			return fmt.Errorf("%s/go.mod names no module", d)
		}
		if err := write(out, module.Version{Path: path, Version: version}, dir, gomod); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		fmt.Printf("%s@%s\n", path, version)
	}
	return nil
}

// modules reads the list of public module directories.
func modules(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var dirs []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		dirs = append(dirs, line)
	}
	return dirs, s.Err()
}

// write adds m to the proxy at out: @v/list, VERSION.info, .mod and .zip.
func write(out string, m module.Version, dir string, gomod []byte) error {
	esc, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	base := filepath.Join(out, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return err
	}
	zf, err := os.Create(filepath.Join(base, m.Version+".zip"))
	if err != nil {
		return err
	}
	if err := modzip.CreateFromDir(zf, m, dir); err != nil {
		zf.Close()
		return err
	}
	if err := zf.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(base, m.Version+".mod"), gomod, 0o644); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{m.Version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(base, m.Version+".info"), info, 0o644); err != nil {
		return err
	}
	return addToList(filepath.Join(base, "list"), m.Version)
}

// addToList adds version to the proxy's list of versions, keeping the ones
// listed before, sorted by semver.
func addToList(name, version string) error {
	old, err := os.ReadFile(name)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	versions := []string{version}
	for _, v := range strings.Fields(string(old)) {
		if v != version {
			versions = append(versions, v)
		}
	}
	semver.Sort(versions)
	return os.WriteFile(name, []byte(strings.Join(versions, "\n")+"\n"), 0o644)
}
