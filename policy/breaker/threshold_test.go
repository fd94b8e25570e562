package breaker_test

import (
	"errors"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

func TestSetThresholdKeepsStateAndTakesEffect(t *testing.T) {
	clk := clock.NewFake()
	b := breaker.New(breaker.WithThreshold(5), breaker.WithClock(clk))
	b.Record(true)
	b.Record(true)
	b.SetThreshold(3)
	if s := b.State(); s != breaker.Closed {
		t.Fatalf("state after SetThreshold = %v, want closed", s)
	}
	b.Record(true) // the third in a row: trips under the new threshold
	if s := b.State(); s != breaker.Open {
		t.Fatalf("state after 3 failures with threshold 3 = %v, want open", s)
	}
	b.SetThreshold(10)
	if s := b.State(); s != breaker.Open {
		t.Fatalf("state after raising the threshold = %v, want still open", s)
	}
	if _, err := b.Allow(); !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("Allow on the open breaker = %v, want ErrOpen", err)
	}
}

func TestSetThresholdOff(t *testing.T) {
	b := breaker.New(breaker.WithThreshold(2), breaker.WithClock(clock.NewFake()))
	b.SetThreshold(resilience.Off)
	for range 10 {
		b.Record(true)
	}
	if s := b.State(); s != breaker.Closed {
		t.Fatalf("state after 10 failures with the rule off = %v, want closed", s)
	}
}

func TestSetThresholdPanics(t *testing.T) {
	for _, n := range []int{0, -2, 1 << 33} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("SetThreshold(%d) did not panic", n)
				}
			}()
			breaker.New().SetThreshold(n)
		}()
	}
	defer func() {
		if recover() == nil {
			t.Error("SetThreshold on a Keyed's breaker did not panic")
		}
	}()
	breaker.NewKeyed[string]().Breaker("a").SetThreshold(3)
}

// The ends of SetThreshold's range are thresholds: 1 trips at the first
// failure, 4294967295 (1<<32 - 1) is accepted; one more panics.
func TestSetThresholdRangeEnds(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(5))
	b.SetThreshold(1)
	fail(t, b, f, 1)
	wantState(t, b, breaker.Open)

	b.Reset()
	b.SetThreshold(1<<32 - 1)
	fail(t, b, f, 10)
	wantState(t, b, breaker.Closed)

	defer func() {
		if recover() == nil {
			t.Error("SetThreshold(1<<32) did not panic")
		}
	}()
	b.SetThreshold(1 << 32)
}
