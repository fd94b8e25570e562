package redistest

import (
	"testing"
	"time"
)

// This file's name sorts before the other test files but boundedsort's,
// so TestKillReturns runs early: a Kill that never saw its process exit
// would make every later test's Stop wait its 10s safety bound, and the
// package time out instead of failing here.

// Kill returns once the killed process has exited, and the server is no
// longer running.
func TestKillReturns(t *testing.T) {
	defer notSkipped(t, "redis-server")
	s := Start(t)
	done := make(chan []string, 1)
	go func() {
		_, failed := run(t, s.Kill)
		done <- failed
	}()
	select {
	case failed := <-done:
		if len(failed) != 0 {
			t.Errorf("Kill failed with %q", failed)
		}
	case <-time.After(2 * time.Second): // a bound for failure only: a SIGKILLed server exits at once
		t.Fatal("Kill did not return after 2s")
	}
	if s.running() {
		t.Error("a killed server is running")
	}
}
