package sim

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
)

// When a simulated call panics, the calls still in progress are unwound
// within the run: Run re-panics only once each has returned, so none goes
// on running beside the caller of Run. In a bubble: the first call waits
// on its context (off the clock), which the end ends; it then sleeps on
// the clock (cut at once) and works for 1s of wall-clock time; the
// second call panics.
func TestPanicUnwindsTheOtherCallsWithinTheRun(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var returned atomic.Bool
		wantPanic(t, "boom", func() {
			Run(Scenario{Duration: time.Second, Clients: []Clients{{Calls: 1}, {Start: 10 * time.Millisecond, Calls: 1}}},
				PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
					clk := env.Clock()
					var n atomic.Int32
					return resilience.New("wait or panic", func(ctx context.Context, next resilience.Next[int]) (int, error) {
						if n.Add(1) == 2 {
							panic("boom")
						}
						<-ctx.Done()
						_ = clk.Sleep(context.Background(), time.Millisecond)
						time.Sleep(time.Second) // wall-clock, in the bubble
						returned.Store(true)
						return 0, ctx.Err()
					})
				}})
		})
		if !returned.Load() {
			t.Error("Run panicked before the waiting call had returned")
		}
		time.Sleep(2 * time.Second) // for the failing case: the call ends
	})
}
