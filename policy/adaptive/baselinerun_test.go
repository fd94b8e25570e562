package adaptive_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// baselines runs one window of 10 calls at each latency, a second apart,
// waiting gap before the last, and returns the baseline after each.
func baselines(t *testing.T, memory, gap time.Duration, lats ...time.Duration) []time.Duration {
	t.Helper()
	fake := clock.NewFake()
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(&recorder{}), adaptive.WithInitial(20), adaptive.WithWindowDuration(time.Second),
		adaptive.WithWindowCalls(10), adaptive.WithBaselineMemory(memory))
	var got []time.Duration
	for i, lat := range lats {
		if i == len(lats)-1 {
			fake.Advance(gap)
		}
		windowOf(t, lim, fake, 10, lat, nil)
		got = append(got, lim.Stats().Baseline)
	}
	return got
}

// A window at exactly b/1.05 is no lower than the bound: it is the
// baseline at once and begins no run, so the next, faster window steps
// down from it, to b/1.05², not from b.
func TestWindowAtTheBoundBeginsNoRun(t *testing.T) {
	base := 105 * time.Millisecond
	b1 := time.Duration(float64(base) / 1.05)
	b2 := time.Duration(float64(b1) / 1.05)
	want := []time.Duration{base, b1, b2}
	if diff := cmp.Diff(want, baselines(t, 10*time.Minute, 0, base, b1, time.Millisecond)); diff != "" {
		t.Errorf("baselines mismatch (-want +got):\n%s", diff)
	}
}

// Once the baseline's memory has forgotten every window, there is no
// baseline to step down from: the next window's latency is the baseline,
// whatever run of fast windows was under way.
func TestForgottenBaselineEndsTheRun(t *testing.T) {
	base := 100 * time.Millisecond
	b1 := time.Duration(float64(base) / 1.05)
	want := []time.Duration{base, b1, 10 * time.Millisecond}
	if diff := cmp.Diff(want, baselines(t, 8*time.Second, time.Hour, base, 10*time.Millisecond, 10*time.Millisecond)); diff != "" {
		t.Errorf("baselines mismatch (-want +got):\n%s", diff)
	}
}

// A run of fast windows, once confirmed (three windows and 2s), offers the
// highest latency of the run, not its last.
func TestConfirmedRunOffersItsHighestLatency(t *testing.T) {
	ms := time.Millisecond
	b1 := time.Duration(float64(20*ms) / 1.05)
	got := baselines(t, 10*time.Minute, 0, 20*ms, 20*ms, 20*ms, 5*ms, 8*ms, 2*ms)
	if diff := cmp.Diff([]time.Duration{b1, b1, 8 * ms}, got[3:]); diff != "" {
		t.Errorf("baselines of a run at 5ms, 8ms, 2ms after 20ms mismatch (-want +got):\n%s", diff)
	}
}
