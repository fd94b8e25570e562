package sim

import (
	"testing"
	"testing/synctest"
	"time"
)

// The watchdog gives up on a run that makes no progress for stuckAfter
// (10s) of wall-clock time (Run's doc), counted from its last step: in a
// bubble, steps 5.5s apart for 16.5s keep it quiet; from the last one, it
// gives up on its tick 10s later (at 27s), not before.
func TestWatchdogGivesUpAfterTenSecondsWithoutAStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld()
		stop := make(chan struct{})
		defer close(stop)
		stuck := w.watchdog(stop)
		closed := func() bool {
			synctest.Wait()
			select {
			case <-stuck:
				return true
			default:
				return false
			}
		}
		for range 3 {
			time.Sleep(5500 * time.Millisecond)
			w.steps.Add(1)
			if closed() {
				t.Fatal("the watchdog gave up with a step every 5.5s")
			}
		}
		time.Sleep(10 * time.Second) // 26.5s: ticks at 17s to 26s, 10 without a step but the first saw the last step
		if closed() {
			t.Fatal("the watchdog gave up 9.5s after the last step")
		}
		time.Sleep(time.Second) // 27.5s: the tick at 27s is the 10th without a step
		if !closed() {
			t.Fatal("the watchdog did not give up 10.5s after the last step")
		}
	})
}
