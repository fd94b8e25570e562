package resilienceotel

import "github.com/f0b5b96b/resilience/telemetry"

// gauge is one observable gauge read from the snapshots of the guards of
// one kind, at each collection.
type gauge struct {
	name, unit, desc string
	kind             telemetry.Kind
	float            bool // a Float64ObservableGauge, else Int64
	value            func(telemetry.Snapshot) float64
}

// gauges are every field of a telemetry.Snapshot but the breaker's state
// (one 0/1 series per state: resilience.circuit_breaker.state) and Refused
// (a counter: resilience.guard.refused). Each has one attribute,
// resilience.policy.name.
var gauges = []gauge{
	{"resilience.circuit_breaker.forced", "1", "1 while the breaker is held open or closed by hand (ForceOpen, ForceClosed), else 0", telemetry.Breaker, false,
		func(s telemetry.Snapshot) float64 { return b2f(s.Breaker.Forced) }},
	{"resilience.circuit_breaker.generation", "{generation}", "The breaker's generation: 1 when made, one more at each transition, ForceOpen, ForceClosed or Reset", telemetry.Breaker, false,
		func(s telemetry.Snapshot) float64 { return float64(s.Breaker.Generation) }},
	{"resilience.circuit_breaker.window.calls", "{call}", "Calls counted in the current state (over the sliding window while closed)", telemetry.Breaker, false,
		func(s telemetry.Snapshot) float64 { return float64(s.Breaker.Calls) }},
	{"resilience.circuit_breaker.window.successes", "{call}", "Successes counted in the current state (over the sliding window while closed)", telemetry.Breaker, false,
		func(s telemetry.Snapshot) float64 { return float64(s.Breaker.Successes) }},
	{"resilience.circuit_breaker.window.failures", "{call}", "Failures counted in the current state (over the sliding window while closed)", telemetry.Breaker, false,
		func(s telemetry.Snapshot) float64 { return float64(s.Breaker.Failures) }},
	{"resilience.circuit_breaker.window.slow", "{call}", "Slow calls counted in the current state (over the sliding window while closed)", telemetry.Breaker, false,
		func(s telemetry.Snapshot) float64 { return float64(s.Breaker.Slow) }},
	{"resilience.circuit_breaker.failure_ratio", "1", "Failures / calls counted in the current state, in [0, 1]", telemetry.Breaker, true,
		func(s telemetry.Snapshot) float64 { return s.Breaker.FailureRatio }},
	{"resilience.circuit_breaker.consecutive_successes", "{call}", "Successes in a row, in the current state", telemetry.Breaker, false,
		func(s telemetry.Snapshot) float64 { return float64(s.Breaker.ConsecutiveSuccesses) }},
	{"resilience.circuit_breaker.consecutive_failures", "{call}", "Failures in a row, in the current state", telemetry.Breaker, false,
		func(s telemetry.Snapshot) float64 { return float64(s.Breaker.ConsecutiveFailures) }},
	{"resilience.circuit_breaker.rejected", "{call}", "Calls refused in the current state", telemetry.Breaker, false,
		func(s telemetry.Snapshot) float64 { return float64(s.Breaker.Refused) }},
	{"resilience.bulkhead.limit", "{call}", "The most calls the bulkhead lets run at once", telemetry.Bulkhead, false,
		func(s telemetry.Snapshot) float64 { return float64(s.Bulkhead.Limit) }},
	{"resilience.bulkhead.in_flight", "{call}", "Calls holding a slot of the bulkhead now", telemetry.Bulkhead, false,
		func(s telemetry.Snapshot) float64 { return float64(s.Bulkhead.InFlight) }},
	{"resilience.bulkhead.queued", "{call}", "Calls waiting in the bulkhead's queue now", telemetry.Bulkhead, false,
		func(s telemetry.Snapshot) float64 { return float64(s.Bulkhead.Queued) }},
	{"resilience.rate_limiter.rate", "{token}/s", "Tokens the rate limiter adds per second", telemetry.RateLimit, true,
		func(s telemetry.Snapshot) float64 { return s.Limiter.Rate }},
	{"resilience.rate_limiter.burst", "{token}", "The most tokens the rate limiter's bucket holds", telemetry.RateLimit, false,
		func(s telemetry.Snapshot) float64 { return float64(s.Limiter.Burst) }},
	{"resilience.rate_limiter.tokens", "{token}", "Tokens in the rate limiter's bucket now (negative: owed to waiters)", telemetry.RateLimit, true,
		func(s telemetry.Snapshot) float64 { return s.Limiter.Tokens }},
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// breakerStates are the values of resilience.circuit_breaker.state, each
// a series of its own: 1 for the breaker's state, 0 for the others.
var breakerStates = []string{telemetry.StateClosed, telemetry.StateOpen, telemetry.StateHalfOpen}
