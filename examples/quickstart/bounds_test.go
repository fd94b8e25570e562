package main

import (
	"context"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencetest"
)

// quickstart is run's pipeline, on clk.
func quickstart(clk clock.Clock) resilience.Policy[float64] {
	pricing := breaker.New(breaker.WithName("pricing"), breaker.WithCooldown(time.Second), breaker.WithClock(clk))
	return resilience.Then(
		resilience.Fallback(func(ctx context.Context, err error) (float64, error) { return 9.99, nil }),
		retry.New[float64](retry.WithMaxElapsed(2*time.Second), retry.WithClock(clk)),
		breaker.Policy[float64](pricing),
		timeout.New[float64](200*time.Millisecond, timeout.WithClock(clk)),
	)
}

// The quick start's order draws no finding, and its bounds are tight: a
// dependency that fails at once is called as often as Bounds says, and one
// that asks to be retried just before MaxElapsed and then hangs holds the
// call more than half the bound, never more.
func TestQuickstartBounds(t *testing.T) {
	p := quickstart(clock.Real())
	if fs := p.Check(); len(fs) != 0 {
		t.Errorf("Check(%s) = %v, want none", p, fs)
	}
	b := p.Bounds()
	if want := (resilience.Bounds{Calls: 3, Duration: 2200 * time.Millisecond}); b != want {
		t.Fatalf("Bounds(%s) = %v, want %v", p, b, want)
	}
	for _, tc := range []struct {
		name             string
		fault            resiliencetest.Fault
		minCalls         int64
		minTook, maxTook time.Duration
	}{
		{"fails at once", resiliencetest.Fail(nil),
			3, 0, b.Duration},
		{"hangs", resiliencetest.Hang(),
			3, 600 * time.Millisecond, b.Duration},
		{"asks for 1.9s, then hangs", resiliencetest.Sequence(resiliencetest.RetryAfter(1900*time.Millisecond), resiliencetest.Hang()),
			2, b.Duration / 2, b.Duration},
	} {
		clk := clock.NewFake()
		p := quickstart(clk)
		dep := resiliencetest.NewDependency(1.0, tc.fault)
		start := clk.Now()
		var took time.Duration
		if err := resiliencetest.Drive(clk, time.Millisecond, func() {
			_, _ = p.Do(context.Background(), dep.Call)
			took = clk.Now().Sub(start)
		}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		calls := dep.Calls()
		t.Logf("%s: %d calls in %v; bounds %v", tc.name, calls, took, b)
		if calls < tc.minCalls || calls > int64(b.Calls) {
			t.Errorf("%s: %d calls, want %d to %d", tc.name, calls, tc.minCalls, b.Calls)
		}
		if took < tc.minTook || took > tc.maxTook {
			t.Errorf("%s: took %v, want %v to %v", tc.name, took, tc.minTook, tc.maxTook)
		}
	}
}
