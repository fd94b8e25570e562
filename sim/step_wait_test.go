package sim

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience"
)

// While a call that holds the baton takes wall-clock time, the scheduler
// looks at it from time to time, waiting in between, also in a pipeline
// with goroutines of its own (where it looks at once first): in a bubble,
// whose time passes only while every goroutine waits, the call's 1ms of
// wall-clock time passes and the run ends. The first call runs the server
// on a goroutine of the pipeline; the second sleeps 1ms of wall-clock
// time. 2s of the test's own wall-clock time bound the bubble, for
// failure only.
func TestSchedulerWaitsForACallThatTakesWallClockTime(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		synctest.Test(t, func(t *testing.T) {
			n := 0
			r := Run(Scenario{Duration: time.Second, Clients: []Clients{{Calls: 2}}}, PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
				return resilience.New("fork, then sleep", func(ctx context.Context, next resilience.Next[int]) (int, error) {
					if n++; n == 1 {
						errs := make(chan error, 1)
						go func() { _, err := next.Call(ctx); errs <- err }()
						return 0, <-errs
					}
					time.Sleep(time.Millisecond) // wall-clock, in the bubble
					return next.Call(ctx)
				})
			}})
			if r.Successes != 2 {
				t.Errorf("%+v, want 2 successes", r.Totals)
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("the run in a bubble did not end after 2s of wall-clock time: the scheduler polls without waiting")
	}
}
