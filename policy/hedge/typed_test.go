package hedge_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// typeCheck builds src, the body of a file of package main that imports
// this package as hedge (and time, resilience), with the go command and
// returns its output and whether it compiled. The file is not written into
// the module: an -overlay puts it there for the build only. The build is
// bounded: a go command that hangs fails the test after two minutes.
func typeCheck(t *testing.T, name, src string) (string, bool) {
	t.Helper()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to type-check the snippets: %v", err)
	}
	pkgDir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	file := filepath.Join(tmp, "snippet.go")
	code := "package main\n\nimport (\n\t\"time\"\n\n\t\"github.com/f0b5b96b/resilience\"\n\t\"github.com/f0b5b96b/resilience/policy/hedge\"\n)\n\n" +
		"var _ time.Duration\nvar _ resilience.Policy[int]\n\n" + src + "\n\nfunc main() {}\n"
	if err := os.WriteFile(file, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	// A directory of this package that does not exist: only the overlay
	// has a file in it.
	target := filepath.Join(pkgDir, "testdata", "typecheck", name, "snippet.go")
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {target: file}})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gocmd, "build", "-overlay="+overlayFile, "-o", os.DevNull, "./testdata/typecheck/"+name)
	cmd.Dir = pkgDir
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s: go build did not finish within 2m: %s", name, out)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s: go build did not run: %v", name, err)
	}
	return string(out), err == nil
}

// Options carry their result type in theirs: an option for another T than
// New's is a compile error, not a panic at run time. Options that carry no
// T take no type argument and go to a New of any T.
func TestOptionOfAnotherResultTypeDoesNotCompile(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string // in the compiler's message; nil: it compiles
	}{
		{"same_type", `var _ = hedge.New[int](time.Second,
	hedge.WithMaxHedges(2), hedge.WithClock(nil), hedge.WithQuantile(0.95, 0, resilience.Off), hedge.WithBudget(0.1),
	hedge.WithAccept(func(v int, err error) bool { return err == nil }),
	hedge.WithConfig(hedge.Config[int]{MaxHedges: 3}))
var _ = hedge.New[string](time.Second, hedge.WithMaxHedges(2))
var opts = []hedge.Option[int]{hedge.WithMaxHedges(2), hedge.WithAccept(func(int, error) bool { return true })}
var _ = hedge.New(time.Second, opts...)`, nil},
		{"inferred", `var _ resilience.Policy[int] = hedge.New(time.Second, hedge.WithMaxHedges(2), hedge.WithAccept(func(int, error) bool { return true }))`, nil},
		{"accept_of_another_type", `var _ = hedge.New[int](time.Second, hedge.WithAccept(func(string, error) bool { return true }))`,
			[]string{"hedge.Option[string]", "as hedge.Option[int] value in argument to hedge.New[int]"}},
		{"config_of_another_type", `var _ = hedge.New[int](time.Second, hedge.WithMaxHedges(2), hedge.WithConfig(hedge.Config[[]byte]{MaxHedges: 2}))`,
			[]string{"hedge.Option[[]byte]", "as hedge.Option[int] value in argument to hedge.New[int]"}},
	} {
		out, ok := typeCheck(t, tc.name, tc.src)
		switch {
		case tc.want == nil && !ok:
			t.Errorf("%s: does not compile:\n%s", tc.name, out)
		case tc.want != nil && ok:
			t.Errorf("%s: compiles; want a compile error", tc.name)
		case tc.want != nil:
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("%s: compiler said\n%s\nwant a message with %q", tc.name, out, w)
				}
			}
		}
	}
}
