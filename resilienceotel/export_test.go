package resilienceotel

import (
	"testing"
	"time"
)

// WaitValues waits until the instruments of the guards' values that the
// last collection saw first are made and their callback registered. It
// fails the test if that has not happened within 2 s (a bound for failure
// only, never one of speed): a making of instruments that never ends
// fails the test instead of hanging it.
func (m *Metrics) WaitValues(t testing.TB) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.values.done.Wait()
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("the making of the instruments of the guards' values first seen by the last collection did not end after 2s")
	}
}
