package redistest

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pathWith sets PATH to a directory holding only the named programs
// (links to the installed ones), so the others are not installed.
func pathWith(t *testing.T, bins ...string) {
	t.Helper()
	dir := t.TempDir()
	for _, b := range bins {
		p, err := lookPath(b)
		if err != nil {
			t.Skipf("%s is not installed", b)
		}
		if err := os.Symlink(p, filepath.Join(dir, b)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
}

// Without redis-server (or, for a cluster, redis-cli), Start and
// StartCluster fail the test when CI=true and skip it otherwise, saying
// how to install it.
func TestStartWithoutRedis(t *testing.T) {
	type result struct{ skip, failed []string }
	for _, c := range []struct {
		name string
		bins []string
		ci   string
		fn   func(testing.TB)
		want result
	}{
		{"Start", nil, "true", func(tb testing.TB) { Start(tb) },
			result{failed: []string{"redistest: redis-server is not installed (CI=true): " + Install}}},
		{"Start", nil, "", func(tb testing.TB) { Start(tb) },
			result{skip: []string{"redistest: this test needs a real redis-server, which is not installed: " + Install}}},
		{"StartCluster", nil, "true", func(tb testing.TB) { StartCluster(tb) },
			result{failed: []string{"redistest: redis-server is not installed (CI=true): " + Install}}},
		{"StartCluster", []string{"redis-server"}, "true", func(tb testing.TB) { StartCluster(tb) },
			result{failed: []string{"redistest: redis-cli is not installed (CI=true): " + Install}}},
		{"StartCluster", []string{"redis-server"}, "false", func(tb testing.TB) { StartCluster(tb) },
			result{skip: []string{"redistest: this test needs a real redis-cli, which is not installed: " + Install}}},
	} {
		t.Run(c.name+"/"+strings.Join(c.bins, ",")+"/CI="+c.ci, func(t *testing.T) {
			pathWith(t, c.bins...)
			t.Setenv("CI", c.ci)
			var got result
			got.skip, got.failed = run(t, c.fn)
			if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(result{})); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// Without redis-server and without RESILIENCE_REDIS_ADDR, Run returns 1
// (the tests fail) when CI=true and 0 (they are skipped) otherwise, and
// says why on stderr; it runs no test.
func TestRunWithoutRedis(t *testing.T) {
	t.Setenv(EnvAddr, "")
	pathWith(t)
	for _, c := range []struct {
		ci, msg string
		code    int
	}{
		{"true", "FAIL: redis-server is not installed (CI=true): " + Install + "\n", 1},
		{"", "SKIP: these tests need a real redis-server, which is not installed: " + Install + "\n", 0},
	} {
		t.Setenv("CI", c.ci)
		var code int
		msg := stderrOf(t, func() { code = Run(nil) }) // a nil *testing.M: Run must not run the tests
		if code != c.code || msg != c.msg {
			t.Errorf("CI=%q: Run returned %d and wrote %q, want %d and %q", c.ci, code, msg, c.code, c.msg)
		}
	}
}

// stderrOf returns what fn wrote to os.Stderr.
func stderrOf(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	out := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		out <- string(b)
	}()
	func() {
		defer func() { os.Stderr = old; w.Close() }()
		fn()
	}()
	return <-out
}

// When its server cannot start (here a redis-server that exits at once)
// or it has no temporary directory, Run returns 1 and says why on
// stderr, and runs no test.
func TestRunCannotStart(t *testing.T) {
	t.Setenv(EnvAddr, "")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "redis-server"), []byte("#!/bin/sh\necho no memory\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	var code int
	msg := stderrOf(t, func() { code = Run(nil) })
	if want := "FAIL: redistest: redistest: redis-server exited at start: no memory\n\n"; code != 1 || msg != want {
		t.Errorf("Run with a redis-server that exits: %d and %q, want 1 and %q", code, msg, want)
	}

	t.Setenv("TMPDIR", filepath.Join(dir, "none"))
	msg = stderrOf(t, func() { code = Run(nil) })
	if want := "FAIL: redistest: "; code != 1 || !strings.HasPrefix(msg, want) || !strings.Contains(msg, "none") {
		t.Errorf("Run without a temporary directory: %d and %q, want 1 and a message starting %q", code, msg, want)
	}
}
