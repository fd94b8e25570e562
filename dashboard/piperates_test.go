package dashboard

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

// A pipeline's retries and fallbacks per second are over the time since
// the last snapshot: the first snapshot's from zero over an Interval,
// later ones from the counts the snapshot before saw.
func TestPipelineRatesAcrossSnapshots(t *testing.T) {
	f := clock.NewFake()
	events := new(telemetry.Counter)
	reg := telemetry.NewRegistry()
	d := New(reg, &Options{Counter: events, Clock: f})
	if err := reg.RegisterPipeline("checkout", resilience.Then(resilience.Fallback(func(context.Context, error) (int, error) { return 0, nil }), retry.New[int](retry.WithName("pay")))); err != nil {
		t.Fatal(err)
	}
	observe := func(retries, fallbacks int) {
		for range retries {
			events.Observe(telemetry.Event{Type: retry.EventWaiting, Name: "pay"})
		}
		for range fallbacks {
			events.Observe(telemetry.Event{Type: resilience.EventFallbackUsed, Name: "checkout"})
		}
	}
	rates := func() []*float64 {
		p := snap(t, d, false).Pipelines[0]
		return []*float64{p.RetriesPerSec, p.FallbacksPerSec}
	}
	observe(2, 1)
	if diff := cmp.Diff([]*float64{ptr(2), ptr(1)}, rates()); diff != "" {
		t.Errorf("first snapshot: retries/s, fallbacks/s mismatch (-want +got):\n%s", diff)
	}
	observe(3, 4)
	f.Advance(2 * time.Second)
	if diff := cmp.Diff([]*float64{ptr(1.5), ptr(2)}, rates()); diff != "" {
		t.Errorf("2 s later: retries/s, fallbacks/s mismatch (-want +got):\n%s", diff)
	}
	f.Advance(time.Second)
	if diff := cmp.Diff([]*float64{ptr(0), ptr(0)}, rates()); diff != "" {
		t.Errorf("a second without events: retries/s, fallbacks/s mismatch (-want +got):\n%s", diff)
	}
}
