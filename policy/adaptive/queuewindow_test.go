package adaptive_test

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// What the queue does shows in the window the algorithm gets: a caller
// evicted from a full queue is one of its refusals, and a caller admitted
// past the queue (a critical one, under a reserve) counts in its most
// calls in flight.
func TestQueueShowsInTheWindow(t *testing.T) {
	bubble(t, func(t *testing.T) {
		rec := &recorder{}
		lim := adaptive.New(adaptive.WithAlgorithm(rec), adaptive.WithInitial(4), adaptive.WithMinLimit(4), adaptive.WithMaxLimit(4),
			adaptive.WithMaxQueue(1), adaptive.WithReserve(0.5), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(1))
		held := hold(t, lim, 2)                          // Normal's ceiling is 2 of 4
		low := queueUp(lim, "low", adaptive.Low)         // queued
		n := queueUp(lim, "normal", adaptive.Normal)     // evicts low
		c := queueUp(lim, "critical", adaptive.Critical) // admitted past the queue: 3 in flight
		if got := states(low, n, c); got["low"] != "adaptive: full" || got["normal"] != "queued" || got["critical"] != "admitted" {
			t.Fatalf("states %v, want low refused, normal queued, critical admitted", got)
		}
		time.Sleep(time.Second)
		c.permit.Done(nil) // ends the window
		if len(rec.windows) != 1 {
			t.Fatalf("%d windows ended, want 1", len(rec.windows))
		}
		if w := rec.windows[0]; w.Refused != 1 || w.MaxInFlight != 3 {
			t.Errorf("the window saw %d refused and at most %d in flight, want 1 and 3", w.Refused, w.MaxInFlight)
		}
		for _, p := range held {
			p.Done(nil)
		}
		if got := n.state(); got != "admitted" {
			t.Errorf("normal: %s, want admitted", got)
		}
	})
}
