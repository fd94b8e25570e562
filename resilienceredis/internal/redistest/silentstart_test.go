package redistest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A server that starts but never answers PING fails Restart after the
// start's bound (10s), and is stopped: no process is left running.
func TestRestartOfASilentServer(t *testing.T) {
	defer notSkipped(t, "redis-server")
	s := Start(t)
	s.Kill(t)
	dir := t.TempDir()
	// A redis-server that runs and answers nothing.
	if err := os.WriteFile(filepath.Join(dir, "redis-server"), []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	_, failed := run(t, s.Restart)
	if len(failed) != 1 || !strings.Contains(failed[0], "did not answer PING within 10s") {
		t.Errorf("Restart of a silent server failed with %q, want one failure: no PING answered", failed)
	}
	if s.running() {
		t.Error("the silent server still runs after Restart gave up on it")
	}
}
