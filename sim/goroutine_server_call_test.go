package sim

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
)

// A goroutine of the pipeline that calls the server before anything else
// becomes a simulated call of its own and waits for the baton (the
// package doc's Determinism): it arrives at the server after the events
// already queued for that instant. Two clients at 0 (Base 10ms, Slope
// 10ms); the first runs its call on a goroutine of its own: the second
// client's call, queued first, arrives first and takes 10ms, the
// goroutine's 20ms.
func TestGoroutineOfThePipelineWaitsForTheBatonBeforeTheServer(t *testing.T) {
	ms := time.Millisecond
	var took time.Duration
	n := 0
	Run(Scenario{Server: Server{Base: 10 * ms, Slope: 10 * ms}, Clients: []Clients{{Calls: 1}, {Calls: 1}}},
		PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
			clk := env.Clock()
			return resilience.New("fork first", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				if n++; n > 1 {
					return next.Call(ctx)
				}
				t0 := clk.Now()
				errs := make(chan error, 1)
				go func() {
					_, err := next.Call(ctx)
					took = clk.Now().Sub(t0)
					errs <- err
				}()
				return 0, <-errs
			})
		}})
	if diff := cmp.Diff(20*ms, took); diff != "" {
		t.Errorf("the goroutine's server call mismatch (-want +got):\n%s", diff)
	}
}
