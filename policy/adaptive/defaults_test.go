package adaptive_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// A window needs MinSamples calls, 10 by default, before it may end
// early: past Window, the tenth call to end ends it, not the first.
func TestDefaultMinSamplesIsTen(t *testing.T) {
	fake := clock.NewFake()
	rec := &recorder{}
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(rec), adaptive.WithWindowDuration(time.Second))
	fake.Advance(time.Second)
	for i := 1; i <= 10; i++ {
		if err := call(lim, fake, time.Millisecond, nil); err != nil {
			t.Fatal(err)
		}
		if want := i / 10; len(rec.windows) != want {
			t.Fatalf("after %d calls past the window's Window: %d windows ended, want %d", i, len(rec.windows), want)
		}
	}
}

// BaselineMemory 0 means 10 minutes: a window's latency stays the baseline
// as long as with WithBaselineMemory(10 * time.Minute), and no longer
// (resilience.Off keeps it for ever).
func TestDefaultBaselineMemoryIsTenMinutes(t *testing.T) {
	run := func(opts ...adaptive.Option) []time.Duration {
		fake := clock.NewFake()
		lim := adaptive.New(append(opts, adaptive.WithClock(fake), adaptive.WithAlgorithm(&recorder{}),
			adaptive.WithWindowDuration(time.Minute), adaptive.WithWindowCalls(1))...)
		var got []time.Duration
		for i := range 14 {
			lat := 40 * time.Millisecond
			if i == 0 {
				lat = 20 * time.Millisecond
			}
			fake.Advance(time.Minute)
			if err := call(lim, fake, lat, nil); err != nil {
				t.Fatal(err)
			}
			got = append(got, lim.Stats().Baseline)
		}
		return got
	}
	def := run()
	if diff := cmp.Diff(run(adaptive.WithBaselineMemory(10*time.Minute)), def); diff != "" {
		t.Errorf("the default against a BaselineMemory of 10m: baselines mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(run(adaptive.WithBaselineMemory(resilience.Off)), def); diff == "" {
		t.Errorf("the default keeps the baseline for ever, as Off does: %v", def)
	}
	if got := def[len(def)-1]; got != 40*time.Millisecond {
		t.Errorf("13 minutes after the last window at 20ms: baseline %v, want 40ms", got)
	}
}
