package adaptive_test

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// A limit that grows admits a lone queued caller at once, as it does a
// line of them: here the window ends on a refusal, with no call ending
// to hand the caller a slot.
func TestGrowingLimitAdmitsALoneQueuedCaller(t *testing.T) {
	bubble(t, func(t *testing.T) {
		grow := &recorder{next: func(l float64, _ adaptive.Window) float64 { return l + 1 }}
		lim := adaptive.New(adaptive.WithAlgorithm(grow), adaptive.WithInitial(2), adaptive.WithMaxQueue(1), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(1))
		hold(t, lim, 1)[0].Done(nil) // the window's sample
		hold(t, lim, 2)
		w := queueUp(lim, "w", adaptive.Normal)
		time.Sleep(time.Second)
		x := queueUp(lim, "x", adaptive.Normal) // the queue is full: refused, which ends the window
		if got := x.state(); got != "adaptive: full" {
			t.Fatalf("x: %s, want refused", got)
		}
		if len(grow.windows) != 1 || lim.Stats().Limit != 3 {
			t.Fatalf("%d windows ended, limit %d; want 1 and 3", len(grow.windows), lim.Stats().Limit)
		}
		if got := w.state(); got != "admitted" {
			t.Fatalf("w after the limit grew from 2 to 3: %s, want admitted", got)
		}
	})
}
