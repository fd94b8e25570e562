package sim

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
)

// Goroutines that the pipeline starts and that first ask for the baton
// in the same instant get it in the order they were started, not in the
// order in which they happened to ask (the package doc's Determinism):
// a run's results do not change from one run to the next. The server
// (Base 10ms, Slope 10ms) serves the n-th call in flight in n×10ms, so
// the latencies tell the order of arrival. Each case runs 10 times.
func TestGoroutinesOfThePipelineGetTheBatonInTheOrderStarted(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name    string
		clients []Clients
		starts  int // goroutines each call starts in a row
		gated   bool
		want    []time.Duration // by client, then by goroutine
	}{
		{"four started in a row by one call", []Clients{{Calls: 1}}, 4, false, []time.Duration{10 * ms, 20 * ms, 30 * ms, 40 * ms}},
		{"one each by two calls woken at once off the clock", []Clients{{Calls: 1}, {Calls: 1}}, 1, true, []time.Duration{10 * ms, 20 * ms}},
		{"two each by two calls woken at once off the clock", []Clients{{Calls: 1}, {Calls: 1}}, 2, true, []time.Duration{10 * ms, 20 * ms, 30 * ms, 40 * ms}},
	} {
		for run := range 10 {
			var mu sync.Mutex
			got := make([]time.Duration, len(c.want))
			Run(Scenario{Server: Server{Base: 10 * ms, Slope: 10 * ms}, Clients: c.clients},
				PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
					clk := env.Clock()
					gate := make(chan struct{})
					clk.AfterFunc(ms, func() { close(gate) })
					var n atomic.Int32 // a call that waits off the clock hands no baton back: state shared across calls needs a lock
					return resilience.New("fan out", func(ctx context.Context, next resilience.Next[int]) (int, error) {
						client := int(n.Add(1)) - 1
						if c.gated {
							<-gate
						}
						t0 := clk.Now()
						var wg sync.WaitGroup
						for i := range c.starts {
							wg.Go(func() {
								_, _ = next.Call(ctx)
								mu.Lock()
								defer mu.Unlock()
								got[client*c.starts+i] = clk.Now().Sub(t0)
							})
						}
						wg.Wait()
						return 0, nil
					})
				}})
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("%s, run %d: latencies by goroutine mismatch (-want +got):\n%s", c.name, run, diff)
				break
			}
		}
	}
}
