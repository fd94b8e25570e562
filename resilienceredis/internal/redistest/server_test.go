package redistest

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// config returns a server's value of a configuration parameter.
func config(t *testing.T, addr, name string) string {
	t.Helper()
	v, err := (&Cluster{}).Do(addr, "CONFIG", "GET", name)
	if err != nil {
		t.Fatal(err)
	}
	kv, _ := v.([]any)
	if len(kv) != 2 {
		t.Fatalf("CONFIG GET %s answered %v", name, v)
	}
	return kv[1].(string)
}

// A started server listens on 127.0.0.1 only, persists nothing, and has
// the configuration given after redistest's own.
func TestStartConfig(t *testing.T) {
	defer notSkipped(t, "redis-server")
	s := Start(t, "--maxmemory", "10mb", "--save", "60 1")
	if !strings.HasPrefix(s.Addr, "127.0.0.1:") {
		t.Errorf("Addr %q, want 127.0.0.1:port", s.Addr)
	}
	got := map[string]string{}
	for _, name := range []string{"bind", "port", "appendonly", "protected-mode", "maxmemory", "save"} {
		got[name] = config(t, s.Addr, name)
	}
	want := map[string]string{
		"bind": "127.0.0.1", "port": strings.TrimPrefix(s.Addr, "127.0.0.1:"), "appendonly": "no",
		"protected-mode": "yes", "maxmemory": "10485760", "save": "60 1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("configuration mismatch (-want +got):\n%s", diff)
	}
	if got := config(t, Start(t).Addr, "save"); got != "" {
		t.Errorf("save %q by default, want \"\" (no persistence)", got)
	}
}

// A paused server answers nothing until resumed; a killed one is gone
// with its data, and restarts empty on the same address; a stopped one
// is gone.
func TestServerFaults(t *testing.T) {
	s := Start(t)
	do := func(args ...any) (any, error) { return (&Cluster{}).Do(s.Addr, args...) }
	if _, err := do("SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	s.Pause(t)
	if err := Ping(s.Addr, 100*time.Millisecond); err == nil {
		t.Error("a paused server answered PING")
	}
	if !s.running() {
		t.Error("a paused server is not running")
	}
	s.Resume(t)
	if err := Ping(s.Addr, 2*time.Second); err != nil {
		t.Errorf("a resumed server: %v", err)
	}
	s.Pause(t) // Kill ends a paused server too
	s.Kill(t)
	if s.running() {
		t.Error("a killed server is running")
	}
	if err := Ping(s.Addr, time.Second); err == nil {
		t.Error("a killed server answered PING")
	}
	s.Restart(t)
	if err := Ping(s.Addr, time.Second); err != nil {
		t.Fatalf("a restarted server: %v", err)
	}
	if v, err := do("GET", "k"); err == nil {
		t.Errorf("a restarted server has the data of the killed one: %v", v)
	}
	s.Stop()
	if err := Ping(s.Addr, time.Second); err == nil {
		t.Error("a stopped server answered PING")
	}
	if s.running() {
		t.Error("a stopped server is running")
	}
}

// A server that exits at start (here: an unknown option) fails the test
// with its output.
func TestStartExitsAtStart(t *testing.T) {
	_, failed := run(t, func(tb testing.TB) { Start(tb, "--no-such-option", "1") })
	if len(failed) != 1 || !strings.HasPrefix(failed[0], "redistest: redis-server exited at start: ") || !strings.Contains(failed[0], "no-such-option") {
		t.Errorf("failed with %q, want one failure with the server's complaint", failed)
	}
}

// Pause and Resume of a server that never ran fail the test; Kill and
// Stop have nothing to do.
func TestSignalNotRunning(t *testing.T) {
	s := &Server{}
	for name, fn := range map[string]func(testing.TB){"Pause": s.Pause, "Resume": s.Resume} {
		_, failed := run(t, fn)
		if diff := cmp.Diff([]string{"redistest: server not running"}, failed); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", name, diff)
		}
	}
	if s.running() {
		t.Error("a server that never ran is running")
	}
	if _, failed := run(t, s.Kill); len(failed) != 0 {
		t.Errorf("Kill of a server that never ran failed with %q, want nothing to kill", failed)
	}
	s.Stop() // nothing to stop
}

// A started server is stopped when its test ends.
func TestStartStopsAtCleanup(t *testing.T) {
	var s *Server
	t.Run("running", func(t *testing.T) { s = Start(t) })
	if s == nil {
		return
	}
	if s.running() || Ping(s.Addr, time.Second) == nil {
		t.Error("the server runs after its test ended")
	}
}

// StartProcess starts a server with the given data directory, outside a
// test.
func TestStartProcess(t *testing.T) {
	dir := t.TempDir()
	s, err := StartProcess(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if got := config(t, s.Addr, "dir"); got != dir {
		t.Errorf("dir %q, want %q", got, dir)
	}
}

// Do gives up on a stalled server within its 2s bound.
func TestDoBounded(t *testing.T) {
	s := Start(t)
	s.Pause(t)
	defer s.Resume(t)
	start := time.Now()
	_, err := (&Cluster{}).Do(s.Addr, "PING")
	if took := time.Since(start); err == nil || took > 2500*time.Millisecond {
		t.Errorf("Do on a paused server: %v after %v, want an error within 2s", err, took)
	}
}
