package resiliencehttp_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resiliencehttp"
	"github.com/f0b5b96b/resilience/telemetry"
)

// With the registry as the policies' one observer, the health check lists
// the durations of the retry's calls and attempts by name: their count
// and mean. They never change the status.
func TestHealthDurations(t *testing.T) {
	reg := telemetry.NewRegistry()
	srv := serveHealth(t, resiliencehttp.Health(reg))
	wantProbe(t, "before any call", srv, http.StatusOK, `{"status": "ok", "guards": []}`)

	clk := clock.NewFake()
	p := retry.New[int](retry.WithName("payments"), retry.WithClock(clk), retry.WithAttempts(2),
		retry.WithBackoff(backoff.Constant(0)), retry.WithObserver(reg))
	n := 0
	op := func(context.Context) (int, error) { // 10ms a try; the first try of the second call fails
		clk.Advance(10 * time.Millisecond)
		if n++; n == 2 {
			return 0, errors.New("down")
		}
		return 1, nil
	}
	for range 2 {
		if _, err := p.Do(context.Background(), op); err != nil {
			t.Fatal(err)
		}
	}
	reg.Observe(telemetry.Event{Type: "mine.call", Name: "ledger", Elapsed: time.Second}) // any kind's
	reg.Observe(telemetry.Event{Type: retry.EventCall, Elapsed: time.Second})             // no name: left out
	reg.Observe(telemetry.Event{Type: retry.EventAttempt, Name: "audit", Elapsed: 2 * time.Second})
	reg.Observe(telemetry.Event{Type: retry.EventWaiting, Name: "payments", Elapsed: time.Hour}) // not a duration event
	wantProbe(t, "after two calls", srv, http.StatusOK, `{"status": "ok", "guards": [], "durations": [
		{"name": "audit", "calls": 0, "call_mean_seconds": 0, "attempts": 1, "attempt_mean_seconds": 2},
		{"name": "ledger", "calls": 1, "call_mean_seconds": 1, "attempts": 0, "attempt_mean_seconds": 0},
		{"name": "payments", "calls": 2, "call_mean_seconds": 0.015, "attempts": 3, "attempt_mean_seconds": 0.01}]}`)
}

// Counting a duration of a name seen before allocates nothing.
func TestHealthDurationsObserveAllocs(t *testing.T) {
	reg := telemetry.NewRegistry()
	resiliencehttp.Health(reg)
	e := telemetry.Event{Type: retry.EventAttempt, Name: "payments", Attempt: 1, Elapsed: time.Millisecond}
	reg.Observe(e)
	if n := testing.AllocsPerRun(100, func() { reg.Observe(e) }); n != 0 {
		t.Errorf("%v allocs per duration event, want 0", n)
	}
}
