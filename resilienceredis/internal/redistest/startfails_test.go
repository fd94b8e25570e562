package redistest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeBin puts on PATH, before the real programs, a program name that
// prints out and exits with code 1.
func fakeBin(t *testing.T, name, out string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\necho "+out+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// StartCluster fails the test, saying why, when a node cannot start or
// redis-cli cannot create the cluster.
func TestStartClusterFails(t *testing.T) {
	for _, c := range []struct{ bin, out, want string }{
		{"redis-server", "no memory", "redistest: redis-server exited at start: no memory"},
		{"redis-cli", "no slots", "redistest: redis-cli --cluster create: exit status 1: no slots"},
	} {
		t.Run(c.bin, func(t *testing.T) {
			if _, err := lookPath(c.bin); err != nil {
				t.Skip(c.bin + " is not installed")
			}
			fakeBin(t, c.bin, c.out)
			_, failed := run(t, func(tb testing.TB) { StartCluster(tb) })
			if len(failed) != 1 || !strings.HasPrefix(failed[0], c.want) {
				t.Errorf("failed with %q, want one failure starting %q", failed, c.want)
			}
		})
	}
}
