package sim

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience"
)

// A run that makes no progress for 10s of wall-clock time panics (Run's
// doc); the call that held it up, once it ends, leaves no goroutine
// behind. In a bubble: a call that sleeps 11s of wall-clock time; the
// bubble ends with all its goroutines gone (else synctest.Test fails).
func TestStuckRunLeavesNoGoroutineBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wantPanic(t, "10s of wall-clock time", func() {
			Run(Scenario{Duration: time.Second, Clients: []Clients{{Calls: 1}}}, PolicySet[int]{Build: func(*Env) resilience.Policy[int] {
				return resilience.New("slow", func(ctx context.Context, next resilience.Next[int]) (int, error) {
					time.Sleep(11 * time.Second) // wall-clock, in the bubble
					return 0, nil
				})
			}})
		})
		time.Sleep(2 * time.Second) // the call ends
		synctest.Wait()
	})
}
