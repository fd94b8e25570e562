package exporttest

import (
	"context"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/telemetry"
)

// ClosedPathAllocs fails t unless a success through exported, a [Breaker]
// with the exporter attached (observer and registry), allocates nothing.
func ClosedPathAllocs(t testing.TB, exported resilience.Policy[int]) {
	t.Helper()
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() {
		if _, err := exported.Do(ctx, OK); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("closed path with the exporter attached: %v allocs per call, want 0", n)
	}
}

// ObserveAllocs fails t unless obs counts each of events, once it has
// seen it (its series' first event makes the series), without allocating.
func ObserveAllocs(t testing.TB, obs telemetry.Observer, events ...telemetry.Event) {
	t.Helper()
	for _, e := range events {
		obs.Observe(e) // the series' first event makes it
		if n := testing.AllocsPerRun(1000, func() { obs.Observe(e) }); n != 0 {
			t.Errorf("Observe(%s): %v allocs, want 0", e.Type, n)
		}
	}
}
