package sim

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience"
)

// A run that makes no progress for 10s of wall-clock time panics (Run's
// doc); the call that held it up, once it ends, starts no other call and
// leaves no goroutine behind. In a bubble: a client of two calls whose
// first sleeps 11s of wall-clock time; the bubble ends with all its
// goroutines gone (else synctest.Test fails), the second call never made.
func TestStuckRunLeavesNoGoroutineBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		wantPanic(t, "10s of wall-clock time", func() {
			Run(Scenario{Duration: time.Second, Clients: []Clients{{Calls: 2}}}, PolicySet[int]{Build: func(*Env) resilience.Policy[int] {
				return resilience.New("slow", func(ctx context.Context, next resilience.Next[int]) (int, error) {
					if n.Add(1) == 1 {
						time.Sleep(11 * time.Second) // wall-clock, in the bubble
					}
					return next.Call(ctx)
				})
			}})
		})
		time.Sleep(2 * time.Second) // the call ends
		synctest.Wait()
		if got := n.Load(); got != 1 {
			t.Errorf("%d calls started, want 1: none after the run", got)
		}
	})
}
