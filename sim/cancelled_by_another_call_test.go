package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
)

// A Sleep ends when its context ends (simClock.Sleep), whoever ends it:
// here the first call sleeps a minute on a context of its own, and the
// second call, at 10ms, cancels it directly (no AfterFunc, no goroutine
// of the pipeline). The first call's Sleep returns context.Canceled at
// 10ms, not nil a minute later.
func TestSleepEndsWhenAnotherCallCancelsItsContext(t *testing.T) {
	type woke struct {
		Err   string
		Slept time.Duration
	}
	var got []woke
	var cancel context.CancelFunc
	n := 0
	Run(Scenario{Duration: time.Hour, Clients: []Clients{{Calls: 1}, {Start: 10 * time.Millisecond, Calls: 1}}},
		PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
			clk := env.Clock()
			return resilience.New("cancel", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				if n++; n == 1 {
					sleepCtx, cf := context.WithCancel(ctx)
					cancel = cf
					t0 := clk.Now()
					err := clk.Sleep(sleepCtx, time.Minute)
					got = append(got, woke{fmtErr(err), clk.Now().Sub(t0)})
					return 0, err
				}
				cancel()
				return next.Call(ctx)
			})
		}})
	want := []woke{{fmtErr(context.Canceled), 10 * time.Millisecond}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the sleep whose context another call cancelled mismatch (-want +got):\n%s", diff)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return "<nil>"
	}
	if errors.Is(err, context.Canceled) {
		return "context.Canceled"
	}
	return err.Error()
}
