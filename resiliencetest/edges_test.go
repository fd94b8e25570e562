package resiliencetest

import (
	"context"
	"testing"
)

// TestExponentialZeroMean: a mean of 0 is valid and draws 0.
func TestExponentialZeroMean(t *testing.T) {
	l := Exponential(0, 1)
	for range 10 {
		if d := l.Draw(); d != 0 {
			t.Fatalf("Exponential(0): Draw = %v, want 0", d)
		}
	}
}

// TestDelayNilClock: a nil clock is the real one.
func TestDelayNilClock(t *testing.T) {
	if err := Delay(nil, Fixed(0)).Inject(context.Background()); err != nil {
		t.Errorf("Delay(nil, Fixed(0)): Inject = %v, want nil", err)
	}
}

// TestFailRateFailsBelowTheRate: a call fails when its draw from the
// seeded source, in [0, 1), is below the rate, so that a share rate of the
// calls fail: a rate equal to the first draw lets the first call through.
func TestFailRateFailsBelowTheRate(t *testing.T) {
	const seed = 5
	first := newSource(seed).float64()
	if err := FailRate(first, seed).Inject(context.Background()); err != nil {
		t.Errorf("FailRate(%v, %d), whose first draw is the rate: Inject = %v, want nil", first, seed, err)
	}
	if err := FailRate(first+1e-12, seed).Inject(context.Background()); err != ErrInjected {
		t.Errorf("FailRate(just above the first draw): Inject = %v, want ErrInjected", err)
	}
}

// TestTimelineEdges: a nil clock is the real one; two steps at the same
// At are valid, and the later one holds from then on.
func TestTimelineEdges(t *testing.T) {
	f := Timeline(nil, Step{At: 0, Fault: Healthy()}, Step{At: 0, Fault: Fail(nil)})
	if err := f.Inject(context.Background()); err != ErrInjected {
		t.Errorf("%v: Inject = %v, want ErrInjected", f, err)
	}
}
