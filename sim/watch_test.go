package sim

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// The Breaker series holds the state at the end of each bucket, before
// anything at the next bucket's first instant: a breaker that trips at
// exactly the start of the second bucket (a call arriving as an outage
// starts) is still closed in the first.
func TestWatchReadsTheEndOfEachBucket(t *testing.T) {
	const b = 1010 * time.Millisecond // a call arrives every 20ms, at 10ms past: one at 1010ms
	r := Run(Scenario{Duration: 3 * b, Bucket: b,
		Server:  Server{Outages: []Outage{{Start: b, End: time.Hour, Mode: Down}}},
		Clients: []Clients{{}}},
		PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
			clk := env.Clock()
			brk := breaker.New(breaker.WithThreshold(1), breaker.WithCooldown(time.Hour), breaker.WithClock(clk))
			env.Watch(brk)
			pace := resilience.New("pace", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				if err := clk.Sleep(ctx, 10*time.Millisecond); err != nil {
					return 0, err
				}
				return next.Call(ctx)
			})
			return resilience.Then(pace, breaker.Policy[int](brk))
		}})
	c, o := breaker.Closed, breaker.Open
	if diff := cmp.Diff([]breaker.State{c, o, o}, r.Breaker); diff != "" {
		t.Errorf("breaker series mismatch (-want +got):\n%s", diff)
	}
	if r.Down != 1 || r.Window(b, 2*b).Down != 1 {
		t.Errorf("%+v: want the one call that tripped it down, at %v", r.Totals, b)
	}
}
