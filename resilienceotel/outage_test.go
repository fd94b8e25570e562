package resilienceotel_test

import (
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/resilienceotel/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// downError is the dependency's failure in the scripted outage; its
// error.type is its Go type.
type downError struct{}

func (downError) Error() string { return "dependency down" }

const downType = "resilienceotel_test.downError"

// TestScriptedOutage runs exporttest.Outage, a pipeline (retry > breaker,
// their one observer the registry that m observes) through an outage on a fake clock: two healthy
// calls, a call whose two attempts fail and trip the breaker, a call the
// open breaker refuses, then, after the cooldown, a trial that closes it
// and one more success. Every instrument must hold what that script makes, exactly:
// counts, attributes, durations and the breaker's gauges, beside fake
// bulkhead and rate limiter snapshots.
func TestScriptedOutage(t *testing.T) {
	clk := clock.NewFake()
	reg := telemetry.NewRegistry()
	m, reader := newMetrics(t, resilienceotel.WithRegistry(reg), resilienceotel.WithClock(clk))

	// The registry is the pipeline's one observer, and no Measure layer:
	// the retry's duration events time the calls and the attempts.
	exporttest.Outage(t, clk, reg, reg, resilience.Policy[string]{}, resilience.Policy[string]{}, downError{})

	// The fake bulkhead and limiter were registered after New: their
	// values' instruments are made after the first collection that saw
	// them.
	collect(t, reader)
	m.WaitValues(t)
	got := collect(t, reader)
	brk, rty := ptype("breaker"), ptype("retry")
	prices := pname("prices")
	assertData(t, got, "resilience.events", counter(
		pt[int64](2, brk, prices, event(breaker.EventFailure), errtype(downType)),
		pt[int64](1, brk, prices, event(breaker.EventOpened)),
		pt[int64](1, brk, prices, event(breaker.EventRefused), errtype("breaker.open")),
		pt[int64](1, brk, prices, event(breaker.EventHalfOpened)),
		pt[int64](1, brk, prices, event(breaker.EventClosed)),
		pt[int64](2, rty, prices, event(retry.EventAttemptFailed), errtype(downType)),
		pt[int64](1, rty, prices, event(retry.EventAttemptFailed), errtype("breaker.open")),
		pt[int64](1, rty, prices, event(retry.EventWaiting), errtype(downType)),
		pt[int64](1, rty, prices, event(retry.EventGaveUp), errtype("retry.attempts")),
		pt[int64](1, rty, prices, event(retry.EventGaveUp), errtype("retry.max_wait")),
		pt[int64](4, rty, prices, event(retry.EventAttempt)),
		pt[int64](2, rty, prices, event(retry.EventAttempt), errtype(downType)),
		pt[int64](1, rty, prices, event(retry.EventAttempt), errtype("breaker.open")),
		pt[int64](4, rty, prices, event(retry.EventCall)),
		pt[int64](1, rty, prices, event(retry.EventCall), errtype(downType)),
		pt[int64](1, rty, prices, event(retry.EventCall), errtype("breaker.open")),
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
		hpt([]float64{0}, rty, prices, event(retry.EventWaiting)),
	))
	assertData(t, got, "resilience.guard.refused", counter(
		pt[int64](1, brk, prices),
		pt[int64](5, ptype("bulkhead"), pname("db")),
		pt[int64](7, ptype("ratelimit"), pname("api")),
	))
	assertData(t, got, "resilience.guard.state", igauge(pt[int64](1, brk, prices, state("closed"))))
	for name, want := range map[string]float64{
		"resilience.breaker.forced":                0,
		"resilience.breaker.generation":            4, // new, opened, half-opened, closed
		"resilience.breaker.window_calls":          1,
		"resilience.breaker.window_successes":      1,
		"resilience.breaker.window_failures":       0,
		"resilience.breaker.window_slow":           0,
		"resilience.breaker.window_refused":        0,
		"resilience.breaker.failure_ratio":         0,
		"resilience.breaker.consecutive_successes": 1,
		"resilience.breaker.consecutive_failures":  0,
	} {
		assertData(t, got, name, fgauge(pt(want, prices)))
	}
	assertData(t, got, "resilience.bulkhead.limit", fgauge(pt(8.0, pname("db"))))
	assertData(t, got, "resilience.bulkhead.in_flight", fgauge(pt(3.0, pname("db"))))
	assertData(t, got, "resilience.bulkhead.queued", fgauge(pt(2.0, pname("db"))))
	assertData(t, got, "resilience.ratelimit.rate", fgauge(pt(100.0, pname("api"))))
	assertData(t, got, "resilience.ratelimit.burst", fgauge(pt(20.0, pname("api"))))
	assertData(t, got, "resilience.ratelimit.tokens", fgauge(pt(-1.5, pname("api"))))
}
