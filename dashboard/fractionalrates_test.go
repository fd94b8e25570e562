package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Rates are written to a tenth and the percentiles each from its own
// rank: 5 calls in 2 s are 2.5 calls/s, their one failure 0.5 errors/s;
// three of 1 ms, one of 10 ms and the failure of 100 ms put p50 at 1 ms
// and p90 and p99 at 100 ms. snapshot.json has the history too.
func TestFractionalRatesAndDistinctPercentiles(t *testing.T) {
	d, f, _ := newFakeDashboard(t)
	p := Measure[int](d, "db")
	snap(t, d, false)
	start := f.Now()
	ctx := context.Background()
	for _, c := range []struct {
		took time.Duration
		err  error
	}{{time.Millisecond, nil}, {time.Millisecond, nil}, {time.Millisecond, nil}, {10 * time.Millisecond, nil}, {100 * time.Millisecond, errBoom}} {
		_, _ = p.Do(ctx, op(f, c.took, c.err))
	}
	f.Set(start.Add(2 * time.Second))

	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/snapshot.json", nil))
	got := decode(t, rec.Body.Bytes()).Guards[0]
	want := tileJSON{
		Name: "db", Guards: []guardJSON{},
		CallsPerSec: ptr(2.5), ErrorsPerSec: ptr(0.5), RefusalsPerSec: ptr(0), ErrorPct: ptr(20),
		LatencyMs: &latencyJSON{P50: 1.02, P90: 96.5, P99: 96.5}, // the middles of the buckets of 1 ms and 100 ms
		History:   &historyJSON{Calls: []float64{0, 2.5, 2.5}, Errors: []float64{0, 0.5, 0.5}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("snapshot.json's tile mismatch (-want +got):\n%s", diff)
	}
}

// A pipeline's fallbacks per second are written to a tenth: one
// fallback in 2 s is 0.5 a second.
func TestFractionalPipelineRates(t *testing.T) {
	f := clock.NewFake()
	events := new(telemetry.Counter)
	reg := telemetry.NewRegistry()
	d := New(reg, &Options{Counter: events, Clock: f})
	if err := reg.RegisterPipeline("checkout", resilience.Then(resilience.Fallback(func(context.Context, error) (int, error) { return 0, nil }), retry.New[int](retry.WithName("pay")))); err != nil {
		t.Fatal(err)
	}
	snap(t, d, false)
	for range 3 {
		events.Observe(telemetry.Event{Type: retry.EventWaiting, Name: "pay"})
	}
	events.Observe(telemetry.Event{Type: resilience.EventFallbackUsed, Name: "checkout"})
	f.Advance(2 * time.Second)
	pl := snap(t, d, false).Pipelines[0]
	if diff := cmp.Diff([]*float64{ptr(1.5), ptr(0.5)}, []*float64{pl.RetriesPerSec, pl.FallbacksPerSec}); diff != "" {
		t.Errorf("retries/s, fallbacks/s mismatch (-want +got):\n%s", diff)
	}
}
