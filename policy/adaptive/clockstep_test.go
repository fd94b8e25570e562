package adaptive_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// The limiter's time never runs backwards, however many times its clock
// is stepped back: after a second step, as after the first, it stands
// still and goes on from there, and windows keep ending every Window.
func TestClockSteppedBackTwice(t *testing.T) {
	fake := clock.NewFake()
	rec := &recorder{}
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(rec), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(2))
	fake.Advance(5 * time.Second)
	for i, back := range []time.Duration{time.Hour, 10 * time.Second, 10 * time.Second} {
		fake.Set(fake.Now().Add(-back))
		ended := len(rec.windows)
		for range 12 {
			windowOf(t, lim, fake, 2, 10*time.Millisecond, errors.New("503"))
		}
		if n := len(rec.windows) - ended; n != 12 {
			t.Errorf("step back %d, of %v: %d windows of 1s ended in 12 windows' time, want 12", i+1, back, n)
		}
		for _, w := range rec.windows[ended:] {
			if w.Duration < time.Second || w.Duration > 2*time.Second {
				t.Errorf("step back %d, of %v: a window lasted %v, want about 1s", i+1, back, w.Duration)
				break
			}
		}
	}
}

// A call admitted just as the clock is stepped back is timed on the
// limiter's time, which stood still at the step: its latency is what the
// clock measured after it, not the step.
func TestCallAcrossAClockStepBack(t *testing.T) {
	fake := clock.NewFake()
	rec := &recorder{}
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(rec), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(1))
	fake.Advance(5 * time.Second)
	if err := call(lim, fake, 0, context.Canceled); err != nil { // read at 5s: not counted
		t.Fatal(err)
	}
	fake.Set(fake.Now().Add(-time.Hour))
	if err := call(lim, fake, 10*time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	if len(rec.windows) != 1 || rec.windows[0].Latency != 10*time.Millisecond {
		t.Fatalf("windows %+v, want one of a 10ms call", rec.windows)
	}
}
