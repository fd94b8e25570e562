// Command mutate runs mutation testing on one Go package of this repository.
//
// Usage (from anywhere in the repository; .mutate/run builds and runs it):
//
//	.mutate/run [flags] ./policy/breaker
//	.mutate/run -files 'keyed*.go' ./policy/breaker
//	.mutate/run resilienceredis            # a nested module's root package
//
// It lists the mutants of the package's non-test files (flipped comparison
// bounds, negated comparisons and if conditions, && <-> ||, + <-> -, * <-> /,
// ++ <-> --, removed "!", removed assignments, increments and calls, 0 <-> 1
// and true <-> false), then runs the package's tests against each mutant.
//
// By default (-schema) it compiles every mutant into one test binary
// (mutant schemata): each mutated file is rewritten once, every mutant
// behind a run-time check of its number (env MUTATE_ID; types from
// go/types); a per-test coverage run tells which tests execute each line,
// and each mutant runs the binary with only those tests (-test.failfast).
// A mutant that does not compile or vet on its own, sits in a constant context or
// whose guard does not type-check is run the old way; so is the whole
// package if the schema binary fails with no mutant active. With
// -schema=false each mutant gets its own "go test -count=1 -failfast".
// -p N runs N mutants at once. A mutant is
//
//   - killed when the tests fail,
//   - survived when they pass (or when no test executes its line: the
//     baseline coverage profile says so, and the mutant is not run),
//   - timed out when the tests hang past the per-mutant timeout (the
//     baseline test time times -factor, plus -slack),
//   - not viable when the mutated package does not compile,
//   - equivalent when listed in the equivalent file (-equiv): a mutant
//     that no test can kill because the behaviour does not change.
//
// The score is killed / (killed + survived + timed out): a mutant that
// only a hang catches is not killed. Not-viable and equivalent mutants
// are not in it. The run also prints killed / (killed + survived), the
// score with the timed-out mutants set apart.
//
// The source tree is never written: each mutant is handed to the go command
// through -overlay, so an interrupted run (Ctrl-C) leaves nothing to
// restore. A lock (flock on a file in the temporary directory, keyed by the
// repository's path) keeps two runs off the same tree at once.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type config struct {
	files  string
	run    string
	factor float64
	slack  time.Duration
	max    int
	list   bool
	ids    string
	equiv  string
	op     string
	v      bool
	schema bool
	p      int
}

func main() {
	var c config
	flag.StringVar(&c.files, "files", "", "comma-separated globs of file names to mutate (default: every non-test .go file)")
	flag.StringVar(&c.run, "run", "", "passed to go test -run")
	flag.Float64Var(&c.factor, "factor", 3, "per-mutant timeout = factor × baseline test time + slack")
	flag.DurationVar(&c.slack, "slack", 15*time.Second, "added to the per-mutant timeout")
	flag.IntVar(&c.max, "max", 0, "run at most this many mutants (0: all)")
	flag.BoolVar(&c.list, "list", false, "list the mutants and exit")
	flag.StringVar(&c.ids, "ids", "", "comma-separated mutant numbers (from -list) to run")
	flag.StringVar(&c.equiv, "equiv", "", "file of equivalent mutants (default: .mutate/equivalent.txt and .mutate/equivalent/*.txt at the repository top)")
	flag.StringVar(&c.op, "op", "", "comma-separated operator classes to run (boundary,negate,logical,arith,incdec,not,remove,const)")
	flag.BoolVar(&c.v, "v", false, "print every mutant's result")
	flag.BoolVar(&c.schema, "schema", true, "compile the package's mutants into one test binary (mutant schemata) and run each mutant with the tests that cover its line; false: one go test run a mutant")
	flag.IntVar(&c.p, "p", 1, "run this many mutants at once")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: mutate [flags] PACKAGE_DIR\n\nPACKAGE_DIR is a directory (./policy/breaker, resilienceredis).\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(c, flag.Arg(0)); errors.Is(err, errInterrupted) {
		os.Exit(130)
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

// errInterrupted is run's error when a signal ended it; the report of
// the mutants run so far has been printed, and the temporary files
// removed.
var errInterrupted = errors.New("interrupted")

type outcome int

const (
	killed outcome = iota
	survived
	uncovered // survived without running: no test executes the line
	timedOut
	notViable
	equivalent
)

var outcomeName = [...]string{"killed", "SURVIVED", "SURVIVED (not covered)", "timed out", "not viable", "equivalent"}

func run(c config, dir string) error {
	pkgDir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if st, err := os.Stat(pkgDir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	modRoot, err := findUp(pkgDir, "go.mod")
	if err != nil {
		return err
	}
	top, err := findUp(pkgDir, ".git")
	if err != nil {
		top = modRoot
	}
	relPkg, _ := filepath.Rel(modRoot, pkgDir)
	pkgArg := "./" + filepath.ToSlash(relPkg)
	relTop, _ := filepath.Rel(top, pkgDir)
	if relTop == "" {
		relTop = "."
	}

	ms, err := mutants(c, pkgDir, top)
	if err != nil {
		return err
	}
	if c.list {
		for i, m := range ms {
			fmt.Printf("%4d %s\n", i, m.key())
		}
		return nil
	}
	unlock, err := lock(top)
	if err != nil {
		return err
	}
	defer unlock()
	ids := make([]int, len(ms)) // the mutants' numbers, as -list prints them
	for i := range ids {
		ids[i] = i
	}
	if c.ids != "" {
		var sel []mutant
		ids = nil
		for _, s := range strings.Split(c.ids, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || i < 0 || i >= len(ms) {
				return fmt.Errorf("-ids: %q is not a mutant number in 0..%d", s, len(ms)-1)
			}
			sel = append(sel, ms[i])
			ids = append(ids, i)
		}
		ms = sel
	}
	if c.max > 0 && len(ms) > c.max {
		ms, ids = ms[:c.max], ids[:c.max]
	}
	equiv, err := readEquiv(c.equiv, top)
	if err != nil {
		return err
	}

	tmp, err := os.MkdirTemp("", "mutate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// The schema path: one build for every mutant that compiles in.
	var fr *fastRun
	var cover map[string][]block
	var baseline time.Duration
	start := time.Now()
	if c.schema {
		var err error
		fr, cover, baseline, err = prepareFast(ctx, c, ms, ids, tmp, modRoot, pkgDir, pkgArg)
		var eb errBaseline
		switch {
		case errors.Is(err, errInterrupted) || ctx.Err() != nil:
			return errInterrupted
		case errors.As(err, &eb):
			return eb
		case err != nil:
			fmt.Printf("mutate: schemata not used, one go test run a mutant: %v\n", err)
			fr = nil
		}
	}
	if fr == nil {
		// Baseline: the tests must pass unmutated; its coverage profile
		// tells which mutants no test reaches; its duration sets the
		// timeout.
		profile := filepath.Join(tmp, "cover.out")
		base := goTest(c, pkgArg, "-coverprofile="+profile, "-covermode=set")
		t0 := time.Now()
		res := runCmd(ctx, modRoot, nil, base, 30*time.Minute)
		baseline = time.Since(t0)
		if ctx.Err() != nil {
			return errInterrupted
		}
		if res.err != nil {
			return fmt.Errorf("baseline tests fail on the unmutated tree:\n%s", res.out)
		}
		var err error
		if cover, err = readCover(profile); err != nil {
			return err
		}
	}
	timeout := time.Duration(c.factor*float64(baseline)) + c.slack
	slowTimeout := ownBuildTimeout(timeout, fr)
	fmt.Printf("mutate %s: %d mutants, baseline %.1fs, timeout per mutant %.1fs\n",
		relTop, len(ms), baseline.Seconds(), timeout.Seconds())
	if fr != nil {
		fmt.Printf("mutate: a mutant left out of the schema builds its own test binary: timeout %.1fs\n", slowTimeout.Seconds())
		fmt.Printf("mutate: schemata: %d of %d mutants in one binary, %d tests, set up in %.1fs\n",
			len(fr.in), len(ms), len(fr.names), time.Since(start).Seconds())
		if c.v {
			for i, m := range ms {
				if why, ok := fr.left[ids[i]]; ok {
					fmt.Printf("  one build a mutant (%s): %s\n", why, m.key())
				}
			}
		}
	}

	counts := map[outcome]int{}
	var survivors, timeouts []string
	srcs := &sources{m: map[string][]byte{}}
	results := make([]outcome, len(ms))
	done := make([]chan struct{}, len(ms))
	for i := range done {
		done[i] = make(chan struct{})
	}
	go parallel(c.p, len(ms), func(i int) {
		defer close(done[i])
		if ctx.Err() != nil {
			return
		}
		m := ms[i]
		o := equivalent
		if !equiv[m.key()] {
			o = uncovered
			switch {
			case !covered(cover, m):
			case fr != nil && fr.in[ids[i]]:
				o = fr.runSchemaMutant(ctx, c, m, ids[i], timeout)
			default:
				o = runMutant(ctx, c, m, srcs, tmp, i, modRoot, pkgArg, slowTimeout)
			}
		}
		results[i] = o
	})
	for i, m := range ms {
		<-done[i]
		if ctx.Err() != nil {
			break // the run was interrupted, not the mutant judged
		}
		o := results[i]
		counts[o]++
		switch o {
		case survived, uncovered:
			survivors = append(survivors, m.key())
		case timedOut:
			timeouts = append(timeouts, m.key())
		}
		if c.v || o == survived || o == uncovered {
			fmt.Printf("[%d/%d] %-22s %s\n", i+1, len(ms), outcomeName[o], m.key())
		}
	}
	if ctx.Err() != nil {
		fmt.Println("interrupted: the counts below cover the mutants run so far")
	}
	k, s := counts[killed], counts[survived]+counts[uncovered]
	total := k + s + counts[timedOut] + counts[notViable] + counts[equivalent]
	fmt.Printf("\npackage %s\n", relTop)
	fmt.Printf("  mutants     %d\n", total)
	fmt.Printf("  killed      %d\n", k)
	fmt.Printf("  survived    %d (not covered by any test: %d)\n", s, counts[uncovered])
	fmt.Printf("  timed out   %d\n", counts[timedOut])
	fmt.Printf("  not viable  %d (do not compile)\n", counts[notViable])
	fmt.Printf("  equivalent  %d\n", counts[equivalent])
	fmt.Printf("  wall time   %.1fs\n", time.Since(start).Seconds())
	if t := counts[timedOut]; k+s+t > 0 {
		fmt.Printf("  score       %.1f%% = killed / (killed + survived + timed out)\n", 100*float64(k)/float64(k+s+t))
		if k+s > 0 {
			fmt.Printf("  hangs apart %.1f%% = killed / (killed + survived)\n", 100*float64(k)/float64(k+s))
		}
	} else {
		fmt.Printf("  score       n/a (no mutant killed or survived)\n")
	}
	for _, t := range timeouts {
		fmt.Printf("  timed out: %s\n", t)
	}
	for _, sv := range survivors {
		fmt.Printf("  survived:  %s\n", sv)
	}
	if ctx.Err() != nil {
		return errInterrupted
	}
	return nil
}

// sources caches the files' original text.
type sources struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *sources) get(path string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if src, ok := s.m[path]; ok {
		return src, nil
	}
	src, err := os.ReadFile(path)
	if err == nil {
		s.m[path] = src
	}
	return src, err
}

// ownBuildTimeout is the timeout of a mutant run by go test of its own
// when the schema path is taken: that run builds the package before its
// tests run, so the schema binary's build time is added to the tests'
// timeout, and a slow build is not taken for a hang. Without the schema
// (fr nil) the baseline was a go test run too and timeout holds its build.
func ownBuildTimeout(timeout time.Duration, fr *fastRun) time.Duration {
	if fr == nil {
		return timeout
	}
	return timeout + fr.build
}

// runMutant judges one mutant with its own go test run (the path of
// -schema=false, and of the mutants the schema leaves out); n names its
// temporary files.
func runMutant(ctx context.Context, c config, m mutant, srcs *sources, tmp string, n int, modRoot, pkgArg string, timeout time.Duration) outcome {
	src, err := srcs.get(m.file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		return notViable
	}
	mutFile := filepath.Join(tmp, "m"+itoa(n), filepath.Base(m.file))
	overlay := filepath.Join(tmp, "m"+itoa(n), "overlay.json")
	if os.MkdirAll(filepath.Dir(mutFile), 0o755) != nil {
		return notViable
	}
	js, _ := json.Marshal(map[string]map[string]string{"Replace": {m.file: mutFile}})
	if os.WriteFile(mutFile, m.apply(src), 0o644) != nil || os.WriteFile(overlay, js, 0o644) != nil {
		return notViable
	}
	// go test's own -timeout is set past ours so that a hang is seen as
	// a hang here and not as a failing test.
	args := goTest(c, pkgArg, "-failfast", "-overlay="+overlay, "-timeout="+(2*timeout+time.Minute).String())
	res := runTests(ctx, modRoot, nil, args, timeout)
	switch {
	case res.timedOut, bytes.Contains(res.out, []byte("panic: test timed out")):
		return timedOut
	case res.err == nil:
		return survived
	case bytes.Contains(res.out, []byte("[build failed]")), bytes.Contains(res.out, []byte("[setup failed]")):
		return notViable
	}
	return killed
}

func goTest(c config, pkg string, extra ...string) []string {
	args := []string{"go", "test", "-count=1"}
	if c.run != "" {
		args = append(args, "-run="+c.run)
	}
	args = append(args, extra...)
	return append(args, pkg)
}

type result struct {
	out      []byte
	err      error
	timedOut bool
}

// runCmd runs args in dir in its own process group, killed whole on
// timeout or when ctx ends.
// env nil: this process's environment.
func runCmd(ctx context.Context, dir string, env, args []string, timeout time.Duration) result {
	return runProc(ctx, dir, env, args, timeout, false)
}

// runTests is runCmd for a mutant's tests: it also ends the run as soon as
// a test or an example fails ("--- FAIL" in the output), with a non-nil
// error. -test.failfast stops only the tests, not the examples, so a
// mutant whose test has already failed could otherwise hang in an
// example and be taken for a hang.
func runTests(ctx context.Context, dir string, env, args []string, timeout time.Duration) result {
	return runProc(ctx, dir, env, args, timeout, true)
}

func runProc(ctx context.Context, dir string, env, args []string, timeout time.Duration, stopOnFail bool) result {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &failWatch{}
	if stopOnFail {
		out.failed = make(chan struct{})
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return result{err: err}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	kill := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	select {
	case err := <-done:
		return result{out: out.buf.Bytes(), err: err}
	case <-out.failed: // nil unless stopOnFail: never ready
		kill()
		return result{out: out.buf.Bytes(), err: errors.New("a test failed")}
	case <-t.C:
		kill()
		return result{out: out.buf.Bytes(), err: errors.New("timed out"), timedOut: true}
	case <-ctx.Done():
		kill()
		return result{out: out.buf.Bytes(), err: ctx.Err()}
	}
}

// failWatch collects a command's output and, when failed is not nil,
// closes it at the first "--- FAIL" line. os/exec calls Write from one
// goroutine at a time (Stdout and Stderr are the same writer), and the
// buffer is read after Wait.
type failWatch struct {
	buf    bytes.Buffer
	failed chan struct{}
	seen   bool
	tail   []byte // the end of the last write, for a marker split across two
}

var failMarker = []byte("--- FAIL")

func (w *failWatch) Write(p []byte) (int, error) {
	w.buf.Write(p)
	if w.failed != nil && !w.seen {
		joined := append(w.tail, p...)
		if bytes.Contains(joined, failMarker) {
			w.seen = true
			close(w.failed)
		}
		w.tail = append(w.tail[:0], joined[max(0, len(joined)-len(failMarker)+1):]...)
	}
	return len(p), nil
}

func mutants(c config, pkgDir, top string) ([]mutant, error) {
	entries, err := os.ReadDir(pkgDir)
	if err != nil {
		return nil, err
	}
	var globs []string
	if c.files != "" {
		globs = strings.Split(c.files, ",")
	}
	ops := map[string]bool{}
	if c.op != "" {
		for _, o := range strings.Split(c.op, ",") {
			ops[strings.TrimSpace(o)] = true
		}
	}
	var all []mutant
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if len(globs) > 0 && !matchAny(globs, name) {
			continue
		}
		path := filepath.Join(pkgDir, name)
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if generated(src) {
			continue
		}
		rel, _ := filepath.Rel(top, path)
		ms, err := generate(path, filepath.ToSlash(rel), src)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if len(ops) == 0 || ops[m.op] {
				all = append(all, m)
			}
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no mutants in %s (files %q)", pkgDir, c.files)
	}
	return all, nil
}

func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := filepath.Match(strings.TrimSpace(g), name); ok {
			return true
		}
	}
	return false
}

func generated(src []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "package ") {
			return false
		}
		if strings.HasPrefix(line, "// Code generated ") && strings.HasSuffix(line, " DO NOT EDIT.") {
			return true
		}
	}
	return false
}

func findUp(dir, name string) (string, error) {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, name)); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no %s above %s", name, dir)
		}
		d = parent
	}
}

// lock takes an exclusive, non-blocking flock on a file named after the
// tree's path, so two runs cannot share a tree. The kernel drops the lock
// when the process dies, so there is never a stale lock to clean.
func lock(top string) (func(), error) {
	sum := sha256.Sum256([]byte(top))
	path := filepath.Join(os.TempDir(), "mutate-"+hex.EncodeToString(sum[:8])+".lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another mutate run is using %s (lock %s)", top, path)
	}
	return func() { f.Close() }, nil
}

// block is one coverage-profile block of a file.
type block struct {
	file                                 string // base name (per-test coverage only)
	startLine, startCol, endLine, endCol int
	count                                int
}

func readCover(path string) (map[string][]block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cov := map[string][]block{}
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "mode:") {
			continue
		}
		// name.go:L1.C1,L2.C2 statements count
		colon := strings.LastIndex(line, ":")
		var b block
		var stmts int
		if _, err := fmt.Sscanf(line[colon+1:], "%d.%d,%d.%d %d %d",
			&b.startLine, &b.startCol, &b.endLine, &b.endCol, &stmts, &b.count); err != nil {
			return nil, fmt.Errorf("coverage profile line %q: %v", line, err)
		}
		base := filepath.Base(line[:colon])
		cov[base] = append(cov[base], b)
	}
	for _, bs := range cov {
		sort.Slice(bs, func(i, j int) bool { return bs[i].startLine < bs[j].startLine })
	}
	return cov, nil
}

// covered reports whether a test may execute the mutant: false only when
// the mutant lies in blocks that the baseline never ran and in none it ran.
func covered(cov map[string][]block, m mutant) bool {
	seen := false
	for _, b := range cov[filepath.Base(m.file)] {
		if inBlock(b, m) {
			if b.count > 0 {
				return true
			}
			seen = true
		}
	}
	return !seen
}

// inBlock reports whether the mutant's position lies in the block.
func inBlock(b block, m mutant) bool {
	after := m.line > b.startLine || m.line == b.startLine && m.col >= b.startCol
	before := m.line < b.endLine || m.line == b.endLine && m.col <= b.endCol
	return after && before
}

// readEquiv reads the equivalent-mutant list: one mutant key a line, as
// printed by a run ("path:line:col op desc"), then " # " and the reason.
func readEquiv(path, top string) (map[string]bool, error) {
	paths := []string{path}
	if path == "" {
		// The default: equivalent.txt and every equivalent/*.txt (one
		// file a package, so that work on two packages never edits the
		// same file).
		paths = nil
		if _, err := os.Stat(filepath.Join(top, ".mutate", "equivalent.txt")); err == nil {
			paths = append(paths, filepath.Join(top, ".mutate", "equivalent.txt"))
		}
		more, _ := filepath.Glob(filepath.Join(top, ".mutate", "equivalent", "*.txt"))
		paths = append(paths, more...)
	}
	eq := map[string]bool{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			key, _, _ := strings.Cut(line, " # ")
			eq[strings.TrimSpace(key)] = true
		}
	}
	return eq, nil
}
