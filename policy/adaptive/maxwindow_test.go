package adaptive_test

import (
	"context"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// A window that sees fewer than MinSamples calls ends once it has lasted
// 10 × Window when that is above 10s: a Window of 2s ends it at 20s, not
// before.
func TestSparseWindowEndsAtTenWindows(t *testing.T) {
	fake := clock.NewFake()
	rec := &recorder{}
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(rec), adaptive.WithWindowDuration(2*time.Second), adaptive.WithWindowCalls(5))
	if err := call(lim, fake, time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	fake.Advance(20*time.Second - time.Millisecond - time.Nanosecond)
	_ = call(lim, fake, 0, context.Canceled)
	if len(rec.windows) != 0 {
		t.Fatalf("a window of 1 call (MinSamples 5, Window 2s) ended before 20s: %+v", rec.windows)
	}
	fake.Advance(time.Nanosecond)
	_ = call(lim, fake, 0, context.Canceled)
	if len(rec.windows) != 1 || rec.windows[0].Duration != 20*time.Second {
		t.Fatalf("at 10 × Window: windows %+v, want one lasting 20s", rec.windows)
	}
}

// The shortest BaselineMemory, 1ns, remembers a window's latency for
// (about) nothing: a slower window a minute later is the baseline at once.
func TestShortestBaselineMemory(t *testing.T) {
	fake := clock.NewFake()
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(&recorder{}), adaptive.WithBaselineMemory(time.Nanosecond),
		adaptive.WithWindowDuration(time.Minute), adaptive.WithWindowCalls(1))
	var got []time.Duration
	for _, lat := range []time.Duration{20 * time.Millisecond, 40 * time.Millisecond} {
		fake.Advance(time.Minute)
		if err := call(lim, fake, lat, nil); err != nil {
			t.Fatal(err)
		}
		got = append(got, lim.Stats().Baseline)
	}
	if got[1] != 40*time.Millisecond {
		t.Errorf("baselines %v with a BaselineMemory of 1ns, want the second 40ms", got)
	}
}
