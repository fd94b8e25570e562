package chaos_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/policy/chaos"
)

// TestInjectDrawBelowTheRate: a call gets chaos when the draw is below the
// rate, not when it equals it (a draw is in [0, 1), so rate 0.5 is half).
func TestInjectDrawBelowTheRate(t *testing.T) {
	for _, c := range []struct {
		draw float64
		want bool
	}{{0.49, true}, {0.5, false}, {0.51, false}} {
		in := chaos.NewInjector(0.5, chaos.WithRandom(func() float64 { return c.draw }))
		if got := in.Inject(); got != c.want {
			t.Errorf("rate 0.5, draw %v: Inject() = %v, want %v", c.draw, got, c.want)
		}
	}
}

// TestLatencyNilClockIsReal: a nil clock is the real one (here the
// bubble's), and any delay above 0 is waited, 1ns included.
func TestLatencyNilClockIsReal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := chaos.Latency[int](chaos.NewInjector(1), nil, func() time.Duration { return time.Nanosecond })
		start := time.Now()
		if _, err := p.Do(context.Background(), func(context.Context) (int, error) { return 1, nil }); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != time.Nanosecond {
			t.Errorf("a 1ns delay took %v", got)
		}
	})
}

// TestLatencyZeroDelayGoesOn: a delay of 0 does not wait, so not even a
// caller's ended context stops the call from going on.
func TestLatencyZeroDelayGoesOn(t *testing.T) {
	p := chaos.Latency[int](chaos.NewInjector(1), nil, func() time.Duration { return 0 })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	_, _ = p.Do(ctx, func(context.Context) (int, error) { called = true; return 1, nil })
	if !called {
		t.Error("a delay of 0 with the caller's context ended: the call did not go on")
	}
}
