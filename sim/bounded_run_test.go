package sim

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// Run returns: a run takes no wall-clock time beyond its computation, and
// one that cannot go on panics (Run's doc). Each run below takes
// milliseconds; each is given 2s of wall-clock time, a bound for failure
// only, so that a run that hangs fails here at once rather than holding
// the tests that come after (this file sorts first of the package's
// tests). The runs go through each way a call waits: the clock, the end of
// the run, a timeout's AfterFunc, a goroutine of the pipeline, a channel
// another call closes, a timer's channel, and those that end a run with a
// panic.
func TestRunReturns(t *testing.T) {
	ms := time.Millisecond
	forked := func(env *Env) resilience.Policy[int] {
		clk := env.Clock()
		return resilience.New("fork", func(ctx context.Context, next resilience.Next[int]) (int, error) {
			errs := make(chan error, 1)
			go func() {
				if err := clk.Sleep(ctx, ms); err != nil {
					errs <- err
					return
				}
				_, err := next.Call(ctx)
				errs <- err
			}()
			return 0, <-errs
		})
	}
	gated := func(env *Env) resilience.Policy[int] {
		clk := env.Clock()
		gate := make(chan struct{})
		var n atomic.Int32
		return resilience.New("gate", func(ctx context.Context, next resilience.Next[int]) (int, error) {
			if n.Add(1) == 1 {
				<-gate
			} else {
				if err := clk.Sleep(ctx, 5*ms); err != nil {
					return 0, err
				}
				close(gate)
			}
			return next.Call(ctx)
		})
	}
	timed := func(env *Env) resilience.Policy[int] {
		clk := env.Clock()
		return resilience.New("timer", func(ctx context.Context, next resilience.Next[int]) (int, error) {
			tm := clk.NewTimer(5 * ms)
			<-tm.C()
			return next.Call(ctx)
		})
	}
	never := make(chan struct{}) // closed at the end, for the goroutine of the call blocked for good to end
	defer close(never)
	for _, c := range []struct {
		name  string
		s     Scenario
		build func(env *Env) resilience.Policy[int]
		panic string // "" for none
	}{
		{"calls on the clock", Scenario{Duration: time.Second, Clients: []Clients{{N: 2, Calls: 3, Think: ms}}}, identity, ""},
		{"calls cut short at the end", Scenario{Duration: time.Second,
			Server:  Server{Outages: []Outage{{Start: 500 * ms, End: time.Hour, Mode: Hang}}},
			Clients: []Clients{{N: 2}}}, identity, ""},
		{"calls cut short at the end of a run of 2.5 buckets", Scenario{Duration: 250 * ms, Bucket: 100 * ms,
			Server:  Server{Outages: []Outage{{Start: 50 * ms, End: time.Hour, Mode: Hang}}},
			Clients: []Clients{{N: 2}}}, identity, ""},
		{"calls given up by a timeout", Scenario{Duration: time.Second, Server: Server{Slope: 10 * ms, Workers: 1},
			Clients: []Clients{{N: 3, Calls: 2}}},
			func(env *Env) resilience.Policy[int] { return timeout.New[int](15*ms, timeout.WithClock(env.Clock())) }, ""},
		{"calls on a server resized", Scenario{Duration: time.Second,
			Server:  Server{Workers: 1, Resizes: []Resize{{At: 5 * ms, Workers: 2}, {At: 15 * ms, Workers: 1}}},
			Clients: []Clients{{N: 2, Calls: 3}}}, identity, ""},
		{"calls of goroutines of the pipeline", Scenario{Duration: time.Second, Clients: []Clients{{N: 2, Calls: 2}}}, forked, ""},
		{"a call waiting on another", Scenario{Duration: time.Second, Clients: []Clients{{Calls: 1}, {Start: 10 * ms, Calls: 1}}}, gated, ""},
		{"calls waiting on channels that AfterFuncs close", Scenario{Duration: time.Second, Clients: []Clients{{Calls: 1}, {Start: 10 * ms, Calls: 1}}},
			func(env *Env) resilience.Policy[int] {
				clk := env.Clock()
				gates := []chan struct{}{make(chan struct{}), make(chan struct{})}
				clk.AfterFunc(20*ms, func() { close(gates[0]) })
				clk.AfterFunc(30*ms, func() { close(gates[1]) })
				var n atomic.Int32
				return resilience.New("gates", func(ctx context.Context, next resilience.Next[int]) (int, error) {
					<-gates[n.Add(1)-1]
					return next.Call(ctx)
				})
			}, ""},
		{"a goroutine of the pipeline that never calls the clock", Scenario{Duration: time.Second, Clients: []Clients{{Calls: 2}}},
			func(env *Env) resilience.Policy[int] {
				clk := env.Clock()
				gate := make(chan struct{})
				clk.AfterFunc(5*ms, func() { close(gate) })
				return resilience.New("relay", func(ctx context.Context, next resilience.Next[int]) (int, error) {
					relayed := make(chan struct{})
					go func() { <-gate; close(relayed) }()
					<-relayed
					return next.Call(ctx)
				})
			}, ""},
		{"goroutines started by an AfterFunc callback", Scenario{Duration: time.Second, Clients: []Clients{{Start: 5 * ms, Calls: 1}}},
			func(env *Env) resilience.Policy[int] {
				clk := env.Clock()
				var wg sync.WaitGroup
				clk.AfterFunc(0, func() {
					for range 3 {
						wg.Go(func() { _ = clk.Sleep(context.Background(), ms) })
					}
				})
				return resilience.New("wait", func(ctx context.Context, next resilience.Next[int]) (int, error) {
					wg.Wait()
					return next.Call(ctx)
				})
			}, ""},
		{"calls serialised by a mutex held across their server calls", Scenario{Duration: time.Second, Clients: []Clients{{N: 5, Calls: 2}}},
			func(env *Env) resilience.Policy[int] {
				var mu sync.Mutex
				return resilience.New("one at a time", func(ctx context.Context, next resilience.Next[int]) (int, error) {
					mu.Lock()
					defer mu.Unlock()
					return next.Call(ctx)
				})
			}, ""},
		{"calls waiting on a timer's channel", Scenario{Duration: time.Second, Clients: []Clients{{N: 2, Calls: 2}}}, timed, ""},
		{"calls that stop and reset timers", Scenario{Duration: time.Second, Clients: []Clients{{N: 2, Calls: 2}}},
			func(env *Env) resilience.Policy[int] {
				clk := env.Clock()
				return resilience.New("timers", func(ctx context.Context, next resilience.Next[int]) (int, error) {
					tm := clk.NewTimer(5 * ms)
					<-tm.C()
					tm.Reset(2 * ms)
					tm.Stop()
					tm.Reset(ms)
					<-tm.C()
					af := clk.AfterFunc(ms, func() {})
					af.Reset(2 * ms)
					af.Stop()
					return next.Call(ctx)
				})
			}, ""},
		{"calls through a hedge", Scenario{Seed: 5, Duration: 500 * ms, Server: Server{Base: 20 * ms, Noise: 10 * ms},
			Clients: []Clients{{N: 3, Think: 20 * ms}}},
			func(env *Env) resilience.Policy[int] { return hedge.New[int](25*ms, hedge.WithClock(env.Clock())) }, ""},
		{"a call that panics", Scenario{Duration: time.Second, Clients: []Clients{{N: 2, Calls: 3}}},
			func(*Env) resilience.Policy[int] {
				n := 0
				return resilience.New("bomb", func(ctx context.Context, next resilience.Next[int]) (int, error) {
					if n++; n == 3 {
						panic("boom")
					}
					return next.Call(ctx)
				})
			}, "boom"},
		{"a callback that sleeps while a call sleeps", Scenario{Duration: time.Second, Clients: []Clients{{Calls: 1}}},
			func(env *Env) resilience.Policy[int] {
				clk := env.Clock()
				return resilience.New("sleep", func(ctx context.Context, next resilience.Next[int]) (int, error) {
					clk.AfterFunc(ms, func() { _ = clk.Sleep(context.Background(), ms) })
					_ = clk.Sleep(ctx, 2*ms)
					return next.Call(ctx)
				})
			}, "sim: Sleep called outside a simulated call"},
		{"a callback that sleeps after the calls ended", Scenario{Duration: time.Second, Clients: []Clients{{Calls: 1}}},
			func(env *Env) resilience.Policy[int] {
				clk := env.Clock()
				clk.AfterFunc(500*ms, func() { _ = clk.Sleep(context.Background(), ms) })
				return resilience.Policy[int]{}
			}, "sim: Sleep called outside a simulated call"},
		{"an AfterFunc callback that panics", Scenario{Duration: time.Second, Clients: []Clients{{Calls: 1}}},
			func(env *Env) resilience.Policy[int] {
				env.Clock().AfterFunc(ms, func() { panic("boom in a callback") })
				return resilience.Policy[int]{}
			}, "boom in a callback"},
		{"a call blocked for good", Scenario{Duration: time.Second, Clients: []Clients{{Calls: 1}, {Calls: 2}}},
			func(*Env) resilience.Policy[int] {
				var n atomic.Int32
				return resilience.New("block", func(ctx context.Context, next resilience.Next[int]) (int, error) {
					if n.Add(1) == 1 {
						<-never
					}
					return next.Call(ctx)
				})
			}, "which nothing in the run would ever wake"},
	} {
		done := make(chan string, 1)
		go func() {
			defer func() { done <- fmt.Sprint(recover()) }()
			Run(c.s, PolicySet[int]{Name: c.name, Build: c.build})
		}()
		select {
		case got := <-done:
			if c.panic == "" && got != "<nil>" || c.panic != "" && !strings.Contains(got, c.panic) {
				t.Errorf("%s: Run panicked with %q, want %q", c.name, got, c.panic)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("%s: Run did not return after 2s of wall-clock time", c.name)
		}
	}
}
