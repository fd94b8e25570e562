package resilienceotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/telemetry"
)

// downError is the dependency's failure in the scripted outage; its
// error.type is its Go type.
type downError struct{}

func (downError) Error() string { return "dependency down" }

const downType = "resilienceotel_test.downError"

// TestScriptedOutage runs a pipeline (measure > retry > measure-attempt >
// breaker) through an outage on a fake clock: two healthy calls, a call
// whose two attempts fail and trip the breaker, a call the open breaker
// refuses, then, after the cooldown, a trial that closes it and one more
// success. Every instrument must hold what that script makes, exactly:
// counts, attributes, durations and the breaker's gauges, beside fake
// bulkhead and rate limiter snapshots.
func TestScriptedOutage(t *testing.T) {
	clk := clock.NewFake()
	reg := telemetry.NewRegistry()
	m, reader := newMetrics(t, resilienceotel.WithRegistry(reg), resilienceotel.WithClock(clk))

	b := breaker.New(breaker.WithName("prices"), breaker.WithThreshold(2), breaker.WithCooldown(10*time.Second),
		breaker.WithClock(clk), breaker.WithObserver(m))
	layers := resilienceotel.Measure[string](m, "prices", 2)
	p := resilience.Then(
		layers.Call,
		retry.New[string](retry.WithName("prices"), retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(0)),
			retry.WithMaxWait(time.Second), retry.WithClock(clk), retry.WithObserver(m)),
		layers.Attempt,
		breaker.Policy[string](b),
	)
	for _, g := range []telemetry.Guard{
		b,
		fakeGuard{telemetry.Snapshot{Kind: telemetry.Bulkhead, Name: "db", Refused: 5,
			Bulkhead: telemetry.BulkheadStats{Limit: 8, InFlight: 3, Queued: 2}}},
		fakeGuard{telemetry.Snapshot{Kind: telemetry.RateLimit, Name: "api", Refused: 7,
			Limiter: telemetry.LimiterStats{Rate: 100, Burst: 20, Tokens: -1.5}}},
	} {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}

	healthy := func(ctx context.Context) (string, error) { clk.Advance(10 * time.Millisecond); return "ok", nil }
	failing := func(ctx context.Context) (string, error) { clk.Advance(20 * time.Millisecond); return "", downError{} }
	ctx := context.Background()
	call := func(op resilience.Op[string], wantErr error) {
		t.Helper()
		_, err := p.Do(ctx, op)
		if (wantErr == nil) != (err == nil) || (wantErr != nil && !errors.Is(err, wantErr)) {
			t.Fatalf("call: err = %v, want %v", err, wantErr)
		}
	}
	call(healthy, nil)
	call(healthy, nil)
	call(failing, downError{})     // two attempts fail: the breaker opens
	call(healthy, breaker.ErrOpen) // refused; the hint (10s) exceeds MaxWait: no retry
	clk.Advance(10 * time.Second)  // the cooldown ends
	call(healthy, nil)             // the trial succeeds: closed
	call(healthy, nil)             // counted in the new closed state
	if got := b.State(); got != breaker.Closed {
		t.Fatalf("breaker state = %v, want closed", got)
	}

	got := collect(t, reader)
	brk, rty := ptype("breaker"), ptype("retry")
	prices := pname("prices")
	assertData(t, got, "resilience.events", counter(
		pt[int64](2, brk, prices, event(telemetry.BreakerFailure), errtype(downType)),
		pt[int64](1, brk, prices, event(telemetry.BreakerOpened)),
		pt[int64](1, brk, prices, event(telemetry.BreakerRefused), errtype("breaker.open")),
		pt[int64](1, brk, prices, event(telemetry.BreakerHalfOpened)),
		pt[int64](1, brk, prices, event(telemetry.BreakerClosed)),
		pt[int64](2, rty, prices, event(telemetry.RetryAttemptFailed), errtype(downType)),
		pt[int64](1, rty, prices, event(telemetry.RetryAttemptFailed), errtype("breaker.open")),
		pt[int64](1, rty, prices, event(telemetry.RetryWaiting), errtype(downType)),
		pt[int64](1, rty, prices, event(telemetry.RetryGaveUp), errtype("retry.attempts")),
		pt[int64](1, rty, prices, event(telemetry.RetryGaveUp), errtype("retry.max_wait")),
	))
	assertData(t, got, "resilience.calls", counter(
		pt[int64](4, ptype("pipeline"), prices, outcome("success")),
		pt[int64](1, ptype("pipeline"), prices, outcome("failure"), errtype(downType)),
		pt[int64](1, ptype("pipeline"), prices, outcome("rejected"), errtype("breaker.open")),
		pt[int64](2, brk, prices, outcome("failure"), errtype(downType)),
		pt[int64](1, brk, prices, outcome("rejected"), errtype("breaker.open")),
		pt[int64](1, rty, prices, outcome("failure"), errtype("retry.attempts")),
		pt[int64](1, rty, prices, outcome("failure"), errtype("retry.max_wait")),
	))
	assertData(t, got, "resilience.call.duration", histogram(
		hpt(repeat(0.01, 4), prices, outcome("success")),
		hpt([]float64{0.04}, prices, outcome("failure"), errtype(downType)),
		hpt([]float64{0}, prices, outcome("rejected"), errtype("breaker.open")),
	))
	assertData(t, got, "resilience.attempt.duration", histogram(
		hpt(repeat(0.01, 4), prices, outcome("success"), attempt(1)),
		hpt([]float64{0.02}, prices, outcome("failure"), attempt(1), errtype(downType)),
		hpt([]float64{0.02}, prices, outcome("failure"), attempt(2), errtype(downType)),
		hpt([]float64{0}, prices, outcome("rejected"), attempt(1), errtype("breaker.open")),
	))
	assertData(t, got, "resilience.wait.duration", histogram(
		hpt([]float64{0}, rty, prices, event(telemetry.RetryWaiting)),
	))
	assertData(t, got, "resilience.guard.refused", counter(
		pt[int64](1, brk, prices),
		pt[int64](5, ptype("bulkhead"), pname("db")),
		pt[int64](7, ptype("ratelimit"), pname("api")),
	))
	assertData(t, got, "resilience.circuit_breaker.state", igauge(
		pt[int64](1, prices, state("closed")),
		pt[int64](0, prices, state("open")),
		pt[int64](0, prices, state("half-open")),
	))
	for name, want := range map[string]int64{
		"resilience.circuit_breaker.forced":                0,
		"resilience.circuit_breaker.generation":            4, // new, opened, half-opened, closed
		"resilience.circuit_breaker.window.calls":          1,
		"resilience.circuit_breaker.window.successes":      1,
		"resilience.circuit_breaker.window.failures":       0,
		"resilience.circuit_breaker.window.slow":           0,
		"resilience.circuit_breaker.consecutive_successes": 1,
		"resilience.circuit_breaker.consecutive_failures":  0,
		"resilience.circuit_breaker.rejected":              0,
	} {
		assertData(t, got, name, igauge(pt(want, prices)))
	}
	assertData(t, got, "resilience.circuit_breaker.failure_ratio", fgauge(pt(0.0, prices)))
	assertData(t, got, "resilience.bulkhead.limit", igauge(pt[int64](8, pname("db"))))
	assertData(t, got, "resilience.bulkhead.in_flight", igauge(pt[int64](3, pname("db"))))
	assertData(t, got, "resilience.bulkhead.queued", igauge(pt[int64](2, pname("db"))))
	assertData(t, got, "resilience.rate_limiter.rate", fgauge(pt(100.0, pname("api"))))
	assertData(t, got, "resilience.rate_limiter.burst", igauge(pt[int64](20, pname("api"))))
	assertData(t, got, "resilience.rate_limiter.tokens", fgauge(pt(-1.5, pname("api"))))
}
