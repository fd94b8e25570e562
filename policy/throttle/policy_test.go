package throttle_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/throttle"
)

func TestPolicyName(t *testing.T) {
	if got := throttle.Policy[int](throttle.New()).String(); got != "throttle" {
		t.Errorf("String() = %q, want throttle", got)
	}
	if got := throttle.Policy[int](throttle.New(throttle.WithName("payments"))).String(); got != "throttle(payments)" {
		t.Errorf("String() = %q, want throttle(payments)", got)
	}
	if diff := cmp.Diff("throttle: Policy of a nil *Throttler", panicOf(func() { throttle.Policy[int](nil) })); diff != "" {
		t.Errorf("panic mismatch (-want +got):\n%s", diff)
	}
}

func TestPolicyCountsTheOpsOutcome(t *testing.T) {
	th := throttle.New(throttle.WithClock(clock.NewFake()), throttle.WithRandom(always))
	p := throttle.Policy[string](th)
	ctx := context.Background()
	if v, err := p.Do(ctx, func(context.Context) (string, error) { return "ok", nil }); v != "ok" || err != nil {
		t.Fatalf("Do = %q, %v; want the op's result", v, err)
	}
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v, want the op's panic", r)
			}
		}()
		_, _ = p.Do(ctx, func(context.Context) (string, error) { panic("boom") })
	}()
	// 1 accepted, 1 not (the panic): probability (2 − 2) / 3 = 0.
	done, cancel := context.WithCancel(ctx)
	cancel()
	called := false
	if _, err := p.Do(done, func(context.Context) (string, error) { called = true; return "", nil }); called || !errors.Is(err, context.Canceled) {
		t.Fatalf("a done ctx: op called %v, err %v; want not called and context.Canceled", called, err)
	}
	boom := errors.New("503")
	_, _ = p.Do(ctx, func(context.Context) (string, error) { return "", boom }) // 1 of 3 accepted: (3 − 2) / 4
	if _, err := p.Do(ctx, func(context.Context) (string, error) { called = true; return "", nil }); called || !errors.Is(err, throttle.ErrThrottled) {
		t.Fatalf("throttled: op called %v, err %v; want not called and ErrThrottled", called, err)
	}
	if s := th.Stats(); s.Requests != 3 || s.Accepts != 1 || s.Refused != 1 || s.Probability != 0.25 {
		t.Fatalf("Stats %+v, want 3 requests, 1 accept, 1 refused, probability 1/4", s)
	}
}

func TestNoAllocations(t *testing.T) {
	th := throttle.New()
	if n := testing.AllocsPerRun(1000, func() {
		p, err := th.Allow()
		if err != nil {
			t.Fatal(err)
		}
		p.Done(nil)
	}); n != 0 {
		t.Errorf("Allow + Done: %v allocations, want 0", n)
	}
	p := throttle.Policy[int](th)
	op := func(context.Context) (int, error) { return 1, nil }
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() {
		if _, err := p.Do(ctx, op); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Policy.Do: %v allocations, want 0", n)
	}
	failing := throttle.New(throttle.WithRandom(always))
	send(failing, 1, errors.New("503"))
	if n := testing.AllocsPerRun(1000, func() {
		if _, err := failing.Allow(); err == nil {
			t.Fatal("not throttled")
		}
	}); n != 0 {
		t.Errorf("a refusal: %v allocations, want 0", n)
	}
}
