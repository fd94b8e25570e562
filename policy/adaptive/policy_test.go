package adaptive_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

func TestPolicyName(t *testing.T) {
	for _, tt := range []struct {
		lim  *adaptive.Limiter
		want string
	}{{adaptive.New(), "adaptive"}, {adaptive.New(adaptive.WithName("search")), "adaptive(search)"}} {
		if got := adaptive.Policy[int](tt.lim).String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
	if diff := cmp.Diff("adaptive: Policy of a nil *Limiter", panicOf(func() { adaptive.Policy[int](nil) })); diff != "" {
		t.Errorf("panic mismatch (-want +got):\n%s", diff)
	}
}

func TestPolicyRefusesWithoutCallingTheOp(t *testing.T) {
	lim := adaptive.New(adaptive.WithInitial(1), adaptive.WithMinLimit(1), adaptive.WithMaxLimit(1))
	p := adaptive.Policy[int](lim)
	hold(t, lim, 1)
	called := false
	_, err := p.Do(context.Background(), func(context.Context) (int, error) { called = true; return 1, nil })
	if called || !errors.Is(err, adaptive.ErrFull) {
		t.Fatalf("over the limit: op called %v, err %v; want not called and ErrFull", called, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = p.Do(ctx, func(context.Context) (int, error) { called = true; return 1, nil })
	if called || !errors.Is(err, context.Canceled) {
		t.Fatalf("done ctx: op called %v, err %v; want not called and context.Canceled", called, err)
	}
}

// The op's error is what the permit ends with: a failure counts as one,
// a panic too, and the slot comes back either way.
func TestPolicyEndsThePermitWithTheOpsOutcome(t *testing.T) {
	fake := clock.NewFake()
	rec := &recorder{}
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(rec), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(3))
	p := adaptive.Policy[string](lim)
	ctx := context.Background()
	v, err := p.Do(ctx, func(context.Context) (string, error) { fake.Advance(4 * time.Millisecond); return "ok", nil })
	if v != "ok" || err != nil {
		t.Fatalf("Do = %q, %v; want the op's result", v, err)
	}
	boom := errors.New("503")
	if _, err := p.Do(ctx, func(context.Context) (string, error) { return "", boom }); err != boom {
		t.Fatalf("Do = %v, want the op's error", err)
	}
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v, want the op's panic", r)
			}
		}()
		fake.Advance(time.Second)
		_, _ = p.Do(ctx, func(context.Context) (string, error) { panic("boom") })
	}()
	if s := lim.Stats(); s.InFlight != 0 {
		t.Fatalf("after a success, a failure and a panic: %d in flight, want 0", s.InFlight)
	}
	want := []adaptive.Window{{Latency: 4 * time.Millisecond, Successes: 1, Drops: 2, MaxInFlight: 1, Duration: time.Second + 4*time.Millisecond}}
	want[0].Baseline = 4 * time.Millisecond
	if diff := cmp.Diff(want, rec.windows); diff != "" {
		t.Errorf("windows mismatch (-want +got):\n%s", diff)
	}
}

// Many goroutines through one limiter with a queue and priorities: the
// calls at the dependency never exceed the limit (fixed here, Min = Max),
// and every permit comes back.
func TestConcurrentCallsStayWithinTheLimit(t *testing.T) {
	const limit, goroutines, calls = 4, 16, 300
	lim := adaptive.New(adaptive.WithMinLimit(limit), adaptive.WithMaxLimit(limit), adaptive.WithMaxQueue(6), adaptive.WithReserve(0.25),
		adaptive.WithWindowDuration(time.Microsecond), adaptive.WithWindowCalls(1))
	p := adaptive.Policy[int](lim)
	var now, peak atomic.Int64
	op := func(context.Context) (int, error) {
		n := now.Add(1)
		for m := peak.Load(); n > m && !peak.CompareAndSwap(m, n); m = peak.Load() {
		}
		for range 20 { // let other callers run while this one is in flight
			runtime.Gosched()
		}
		now.Add(-1)
		return 1, nil
	}
	var wg sync.WaitGroup
	var admitted, refused atomic.Int64
	for g := range goroutines {
		wg.Go(func() {
			ctx := adaptive.ContextWithPriority(context.Background(), adaptive.Priority(g%3-1))
			for range calls {
				if _, err := p.Do(ctx, op); err == nil {
					admitted.Add(1)
				} else if errors.Is(err, resilience.ErrRefused) {
					refused.Add(1)
				} else {
					t.Errorf("Do: %v", err)
					return
				}
			}
		})
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	// A lost permit or queued caller shows as calls that stop ending: fail
	// when none ends for 2s (a bound for failure only: the callers take
	// far less than that between two calls).
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for last := int64(-1); ; {
		select {
		case <-finished:
		case <-tick.C:
			if n := admitted.Load() + refused.Load(); n != last {
				last = n
				continue
			}
			t.Fatalf("no call ended for 2s, after %d admitted and %d refused of %d: a permit or a queued caller was lost",
				admitted.Load(), refused.Load(), goroutines*calls)
		}
		break
	}
	if got := peak.Load(); got > limit {
		t.Errorf("%d calls ran at once, limit %d", got, limit)
	}
	s := lim.Stats()
	if s.InFlight != 0 || s.Queued != 0 || s.Refused != uint64(refused.Load()) || admitted.Load()+refused.Load() != goroutines*calls {
		t.Errorf("after %d admitted and %d refused of %d: Stats %+v, want none in flight or queued and Refused = refused",
			admitted.Load(), refused.Load(), goroutines*calls, s)
	}
}

func TestNoAllocations(t *testing.T) {
	lim := adaptive.New()
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() {
		p, err := lim.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p.Done(nil)
	}); n != 0 {
		t.Errorf("Acquire + Done: %v allocations, want 0", n)
	}
	p := adaptive.Policy[int](lim)
	op := func(context.Context) (int, error) { return 1, nil }
	if n := testing.AllocsPerRun(1000, func() {
		if _, err := p.Do(ctx, op); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Policy.Do: %v allocations, want 0", n)
	}
	full := adaptive.New(adaptive.WithMinLimit(1), adaptive.WithMaxLimit(1))
	hold(t, full, 1)
	if n := testing.AllocsPerRun(1000, func() {
		if _, err := full.Acquire(ctx); err == nil {
			t.Fatal("admitted over the limit")
		}
	}); n != 0 {
		t.Errorf("a refusal: %v allocations, want 0", n)
	}
	rlim := adaptive.New(adaptive.WithReserve(0.1))
	pctx := adaptive.ContextWithPriority(ctx, adaptive.Critical)
	if n := testing.AllocsPerRun(1000, func() {
		p, err := rlim.Acquire(pctx)
		if err != nil {
			t.Fatal(err)
		}
		p.Done(nil)
	}); n != 0 {
		t.Errorf("Acquire + Done with a reserve and a priority: %v allocations, want 0", n)
	}
}
