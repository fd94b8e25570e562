package sim

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// TestTimeoutsCutEveryCallShort: many clients whose calls sleep on their
// timeout's context, some woken by time, some by the timeout: each call
// takes its latency or the timeout, whichever is less, however the
// procs' sleeps interleave.
func TestTimeoutsCutEveryCallShort(t *testing.T) {
	var calls []call
	const limit = 10 * time.Millisecond
	Run(Scenario{Duration: time.Minute, Server: Server{Base: 10 * time.Millisecond, Noise: 5 * time.Millisecond},
		Clients: []Clients{{N: 8, Calls: 40, Think: 3 * time.Millisecond}}},
		PolicySet[int]{Name: "timed", Build: func(env *Env) resilience.Policy[int] {
			clk := env.Clock()
			m := resilience.New("measure", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				t0 := clk.Now()
				v, err := next.Call(ctx)
				calls = append(calls, call{Start: t0.Sub(epoch), Took: clk.Now().Sub(t0), Err: err})
				return v, err
			})
			return resilience.Then(m, timeout.New[int](limit, timeout.WithClock(clk)))
		}})
	if len(calls) != 8*40 {
		t.Fatalf("%d calls, want %d", len(calls), 8*40)
	}
	cut := 0
	for _, c := range calls {
		if c.Took > limit {
			t.Errorf("a call at %v took %v (%v), past the %v timeout", c.Start, c.Took, c.Err, limit)
		}
		if c.Err != nil {
			cut++
		}
	}
	if cut == 0 || cut == len(calls) {
		t.Errorf("%d of %d calls cut by the timeout: want some, not all", cut, len(calls))
	}
}

// TestPanicStopsTheRun: once a simulated call panics, no client starts
// another call: the run stops and the panic comes out of Run.
func TestPanicStopsTheRun(t *testing.T) {
	calls := 0
	wantPanic(t, "boom", func() {
		Run(Scenario{Duration: time.Minute, Clients: []Clients{{N: 5, Think: time.Second}}}, PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
			return resilience.New("bomb", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				if calls++; calls == 7 {
					panic("boom")
				}
				return next.Call(ctx)
			})
		}})
	})
	if calls != 7 {
		t.Errorf("%d calls started, want 7: none after the one that panicked", calls)
	}
}

// TestEndCancelsTheCallsContexts: at the end of the run every simulated
// call's context is done, so what waits on it (outside the simulator's
// sleeps) is released, and a call cut short returns an error.
func TestEndCancelsTheCallsContexts(t *testing.T) {
	var ctxs []context.Context
	var errs []error
	Run(Scenario{Duration: time.Second, Server: Server{Outages: []Outage{{Start: 0, End: time.Hour, Mode: Hang}}}, Clients: []Clients{{N: 2, Calls: 1}}},
		PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
			return resilience.New("keep", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				ctxs = append(ctxs, ctx)
				v, err := next.Call(ctx)
				errs = append(errs, err)
				return v, err
			})
		}})
	if len(ctxs) != 2 || len(errs) != 2 {
		t.Fatalf("%d calls, %d returned; want 2, 2", len(ctxs), len(errs))
	}
	for i := range ctxs {
		if ctxs[i].Err() == nil {
			t.Errorf("call %d: its context is not done after the run", i)
		}
		if !errors.Is(errs[i], context.Canceled) {
			t.Errorf("call %d cut short by the end: %v, want context.Canceled", i, errs[i])
		}
	}
}

// TestSleepOutsideCallAfterTheCallEnded: a callback that sleeps after
// every call has ended panics too.
func TestSleepOutsideCallAfterTheCallEnded(t *testing.T) {
	wantPanic(t, "sim: Sleep called outside a simulated call", func() {
		runProbe(t, func(clk clock.Clock, ctx context.Context) {
			clk.AfterFunc(time.Minute, func() { _ = clk.Sleep(context.Background(), time.Second) })
		})
	})
}

// TestSleepEdges: a sleep on a context already done returns its error at
// once; a sleep of 1ns takes 1ns; a sleep of 0 does not yield to the
// other calls due at the same instant.
func TestSleepEdges(t *testing.T) {
	var got []time.Duration
	var errs []error
	runProbe(t, func(clk clock.Clock, ctx context.Context) {
		start := clk.Now()
		done, cancel := context.WithCancel(ctx)
		cancel()
		errs = append(errs, clk.Sleep(done, time.Second))
		got = append(got, clk.Now().Sub(start))
		errs = append(errs, clk.Sleep(ctx, time.Nanosecond))
		got = append(got, clk.Now().Sub(start))
	})
	if diff := cmp.Diff([]time.Duration{0, time.Nanosecond}, got); diff != "" {
		t.Errorf("times after the sleeps mismatch (-want +got):\n%s", diff)
	}
	if !errors.Is(errs[0], context.Canceled) || errs[1] != nil {
		t.Errorf("sleep errors %v, want [context.Canceled <nil>]", errs)
	}

	// Each call notes its number before and after its sleep of 0 (the
	// after as minus the number): the first call's comes before the
	// second's start.
	var order []int
	client := 0
	Run(Scenario{Clients: []Clients{{N: 2, Calls: 1}}}, PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
		clk := env.Clock()
		return resilience.New("order", func(ctx context.Context, next resilience.Next[int]) (int, error) {
			client++
			me := client
			order = append(order, me)
			_ = clk.Sleep(ctx, 0)
			order = append(order, -me)
			return next.Call(ctx)
		})
	}})
	if diff := cmp.Diff([]int{1, -1, 2, -2}, order); diff != "" {
		t.Errorf("a sleep of 0 let the other call run first: order mismatch (-want +got):\n%s", diff)
	}
}

// TestWatchdogCountsOnlyTimeWithoutAStep: in a synctest bubble, calls that
// each block for 6s of wall-clock time (under stuckAfter) but make steps
// in between run to the end, 18s in all: the watchdog counts only the
// time since the last step.
func TestWatchdogCountsOnlyTimeWithoutAStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := Run(Scenario{Duration: time.Minute, Clients: []Clients{{Calls: 3}}}, PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
			return resilience.New("slow", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				time.Sleep(6 * time.Second) // wall clock: the bubble's
				return next.Call(ctx)
			})
		}})
		if r.Successes != 3 {
			t.Errorf("%d successes, want 3", r.Successes)
		}
	})
}

// TestTimeoutOfOneCallLeavesTheOthersSleeps: a call's timeout ending
// wakes only the calls asleep on that call's context. Here the first call
// (served in 10ms, woken by time) then sleeps 1s on a context of its own;
// the second (20ms, its server busy) is cut by its 15ms timeout meanwhile:
// the first call's sleep still lasts its 1s.
func TestTimeoutOfOneCallLeavesTheOthersSleeps(t *testing.T) {
	var slept []time.Duration
	Run(Scenario{Server: Server{Slope: 10 * time.Millisecond}, Clients: []Clients{{N: 2, Calls: 1}}},
		PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
			clk := env.Clock()
			pause := resilience.New("pause", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				v, err := next.Call(ctx)
				t0 := clk.Now()
				_ = clk.Sleep(context.Background(), time.Second)
				slept = append(slept, clk.Now().Sub(t0))
				return v, err
			})
			return resilience.Then(pause, timeout.New[int](15*time.Millisecond, timeout.WithClock(clk)))
		}})
	if diff := cmp.Diff([]time.Duration{time.Second, time.Second}, slept); diff != "" {
		t.Errorf("sleeps after the calls mismatch (-want +got):\n%s", diff)
	}
}

// TestSleepCutByTheEnd: a sleep that the end of the run cuts short
// returns an error, on whatever context it sleeps: it did not sleep its
// time.
func TestSleepCutByTheEnd(t *testing.T) {
	var errs []error
	Run(Scenario{Duration: time.Second, Clients: []Clients{{Calls: 1}}}, PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
		clk := env.Clock()
		return resilience.New("sleep", func(ctx context.Context, next resilience.Next[int]) (int, error) {
			errs = append(errs, clk.Sleep(context.Background(), time.Hour))
			return next.Call(ctx)
		})
	}})
	if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("sleeps cut by the end of the run returned %v, want [context.Canceled]", errs)
	}
}

// TestContextEndsWithTheRun: a simulated call's context ends only when
// the run does (Run's doc), and then it ends, also when every call ended
// before the run's Duration.
func TestContextEndsWithTheRun(t *testing.T) {
	var ctxs []context.Context
	var during []error
	r := Run(Scenario{Duration: time.Hour, Clients: []Clients{{N: 2, Calls: 1}}}, PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
		return resilience.New("keep", func(ctx context.Context, next resilience.Next[int]) (int, error) {
			ctxs = append(ctxs, ctx)
			during = append(during, ctx.Err())
			return next.Call(ctx)
		})
	}})
	if r.Successes != 2 || r.Finished != 10*time.Millisecond {
		t.Fatalf("%+v, finished at %v: want 2 calls done at 10ms", r.Totals, r.Finished)
	}
	for i, ctx := range ctxs {
		if during[i] != nil || !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("call %d: its context's error during the call %v, after the run %v; want nil, then context.Canceled", i, during[i], ctx.Err())
		}
	}
}
