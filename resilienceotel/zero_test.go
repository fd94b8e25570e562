package resilienceotel_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/telemetry"
)

// A zero Metrics is not one New made: Observe and Measure panic on the
// caller's goroutine naming New (an event must not vanish unseen), and
// Close does nothing, as it may be called at any time.
func TestZeroMetrics(t *testing.T) {
	var m resilienceotel.Metrics
	if err := m.Close(); err != nil {
		t.Errorf("Close on a zero Metrics = %v, want nil", err)
	}
	panicOf := func(f func()) (msg any) {
		defer func() { msg = recover() }()
		f()
		return nil
	}
	got := []any{
		panicOf(func() { m.Observe(telemetry.Event{Type: breaker.EventFailure, Name: "db"}) }),
		panicOf(func() { resilienceotel.Measure[int](&m, "db", 1) }),
	}
	want := []any{
		"resilienceotel: Metrics.Observe on a zero Metrics: create one with New",
		"resilienceotel: Measure of a zero Metrics: create one with New",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("panics of a zero Metrics mismatch (-want +got):\n%s", diff)
	}
}
