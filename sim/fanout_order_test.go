package sim

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
)

// Goroutines that the pipeline starts and that first ask for the baton
// in the same instant get it in the order they were started, not in the
// order in which they happened to ask (the package doc's Determinism):
// a run's results do not change from one run to the next. The server
// (Base 10ms, Slope 10ms) serves the n-th call in flight in n×10ms, so
// the latencies tell the order of arrival. Each case runs 10 times. Where
// the order comes from the calls that started the goroutines, every run
// must give it; where it comes from goroutine ids (goroutines one call
// started in a row), most runs must: Go numbers them in increasing order
// unless the call moves to another processor between two starts, which a
// loaded machine makes happen now and then (the package doc's limit). In
// the order they asked, the first case came out in none of 40 runs.
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
		runs := orderRuns{t: t, name: c.name, byID: c.starts > 1}
		for range 10 {
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
			runs.add(cmp.Diff(c.want, got))
		}
		runs.check()
	}
}

// orderRuns counts the runs of a case whose order differs from the one
// wanted: none may, or, where goroutine ids give the order (byID), at most
// 4 of 10.
type orderRuns struct {
	t     *testing.T
	name  string
	byID  bool
	runs  int
	diffs []string // one per run that differs
}

func (o *orderRuns) add(diff string) {
	o.runs++
	if diff != "" {
		o.diffs = append(o.diffs, diff)
	}
}

func (o *orderRuns) check() {
	o.t.Helper()
	if len(o.diffs) == 0 || o.byID && 10*len(o.diffs) <= 4*o.runs {
		return
	}
	o.t.Fatalf("%s: %d of %d runs in another order; the first mismatch (-want +got):\n%s", o.name, len(o.diffs), o.runs, o.diffs[0])
}

// The same when the goroutines are not all started by calls: a goroutine
// of the pipeline started by another that asks for the baton in the same
// instant comes after it, and goroutines that an AfterFunc callback
// starts (on the scheduler, which is no call) come in the order started.
func TestGoroutinesStartedOutsideACallGetTheBatonInTheOrderStarted(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name string
		// build returns the layer; it records each server call's latency
		// by its index in the order started.
		build func(clk clock.Clock, record func(i int, t0 time.Time)) resilience.Policy[int]
		want  []time.Duration
		byID  bool // the order comes from goroutine ids (see above)
	}{
		{"a goroutine and the one it started", func(clk clock.Clock, record func(int, time.Time)) resilience.Policy[int] {
			return resilience.New("nested", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				t0 := clk.Now()
				var wg sync.WaitGroup
				wg.Go(func() {
					wg.Go(func() {
						_, _ = next.Call(ctx)
						record(1, t0)
					})
					_, _ = next.Call(ctx)
					record(0, t0)
				})
				wg.Wait()
				return 0, nil
			})
		}, []time.Duration{10 * ms, 20 * ms}, false},
		{"three started in a row by an AfterFunc callback", func(clk clock.Clock, record func(int, time.Time)) resilience.Policy[int] {
			var wg sync.WaitGroup
			clk.AfterFunc(0, func() {
				t0 := clk.Now()
				for i := range 3 {
					wg.Go(func() {
						if err := clk.Sleep(context.Background(), ms); err == nil {
							record(i, t0)
						}
					})
				}
			})
			return resilience.New("wait for the callback's", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				wg.Wait()
				return next.Call(ctx)
			})
		}, []time.Duration{ms, ms, ms}, true},
	} {
		runs := orderRuns{t: t, name: c.name, byID: c.byID}
		for run := range 10 {
			var mu sync.Mutex
			var order []int
			got := make([]time.Duration, len(c.want))
			Run(Scenario{Server: Server{Base: 10 * ms, Slope: 10 * ms}, Clients: []Clients{{Start: 5 * ms, Calls: 1}}},
				PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
					clk := env.Clock()
					return c.build(clk, func(i int, t0 time.Time) {
						mu.Lock()
						defer mu.Unlock()
						got[i] = clk.Now().Sub(t0)
						order = append(order, i)
					})
				}})
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Fatalf("%s, run %d: latencies by goroutine mismatch (-want +got):\n%s", c.name, run, diff)
			}
			runs.add(cmp.Diff([]int{0, 1, 2}[:len(c.want)], order))
		}
		runs.check()
	}
}

// A goroutine of the pipeline keeps its place in that order for as long
// as it lives: numbered when it first asks for the baton, it comes by that
// number each time it asks again. Goroutine A, started by the second
// call at 0, asks first; goroutine B, started by the first call at 1ms,
// asks after it. Both then wait on a gate (off the clock) that an
// AfterFunc opens at 5ms, and call the server (Base 10ms, Slope 10ms) in
// the same instant: A first, by its number, though the call that started
// B comes first.
func TestGoroutineOfThePipelineKeepsItsPlace(t *testing.T) {
	ms := time.Millisecond
	for run := range 10 {
		var mu sync.Mutex
		got := map[string]time.Duration{}
		Run(Scenario{Server: Server{Base: 10 * ms, Slope: 10 * ms}, Clients: []Clients{{Calls: 1}, {Calls: 1}}},
			PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
				clk := env.Clock()
				gate := make(chan struct{})
				clk.AfterFunc(5*ms, func() { close(gate) })
				var n atomic.Int32 // a call that waits off the clock hands no baton back: state shared across calls needs a lock
				return resilience.New("two goroutines", func(ctx context.Context, next resilience.Next[int]) (int, error) {
					name, wait := "A", time.Duration(0)
					if n.Add(1) == 1 {
						name, wait = "B", ms
					}
					_ = clk.Sleep(ctx, wait)
					var wg sync.WaitGroup
					wg.Go(func() {
						_ = clk.Sleep(ctx, time.Nanosecond) // asks for the baton: numbered
						<-gate
						t0 := clk.Now()
						_, _ = next.Call(ctx)
						mu.Lock()
						defer mu.Unlock()
						got[name] = clk.Now().Sub(t0)
					})
					wg.Wait()
					return 0, nil
				})
			}})
		if diff := cmp.Diff(map[string]time.Duration{"A": 10 * ms, "B": 20 * ms}, got); diff != "" {
			t.Fatalf("run %d: the goroutines' server calls mismatch (-want +got):\n%s", run, diff)
		}
	}
}
