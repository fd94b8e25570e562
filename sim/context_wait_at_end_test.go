package sim

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
)

// A call that waits on its context, off the clock, is woken by the end of
// the run, which ends every call's context (Run's doc): the run covers its
// Duration, as it does while any call is in progress, and the call is cut
// short there (Unfinished, in the last bucket), not taken for a call that
// nothing would ever wake. It is unwound within the run: a sleep it
// starts then returns at once, cut by the end, and Run returns after it.
func TestCallWaitingOnItsContextEndsWithTheRun(t *testing.T) {
	var r *Result
	var err, slept error
	var panicked any
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { panicked = recover() }()
		r = Run(Scenario{Duration: time.Second, Bucket: 100 * time.Millisecond, Clients: []Clients{{Calls: 1}, {Calls: 1}}},
			PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
				clk := env.Clock()
				var n atomic.Int32 // a call that waits off the clock hands no baton back: state shared across calls needs a lock
				return resilience.New("wait", func(ctx context.Context, next resilience.Next[int]) (int, error) {
					if n.Add(1) == 1 {
						<-ctx.Done()
						err = ctx.Err()
						slept = clk.Sleep(context.Background(), time.Millisecond)
						return 0, err
					}
					return next.Call(ctx)
				})
			}})
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Run did not return after 2s of wall-clock time")
	}
	if panicked != nil {
		t.Fatalf("Run panicked: %v", panicked)
	}
	if !errors.Is(slept, context.Canceled) {
		t.Errorf("a sleep after the end of the run returned %v, want context.Canceled", slept)
	}
	if !errors.Is(err, context.Canceled) || r.Unfinished != 1 || r.Series[len(r.Series)-1].Unfinished != 1 || r.Successes != 1 {
		t.Errorf("the waiting call's error %v, %+v: want context.Canceled, 1 unfinished in the last bucket, 1 success", err, r.Totals)
	}
}
