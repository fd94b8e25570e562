package resilienceprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/f0b5b96b/resilience/telemetry"
)

// gauge is one gauge read from the snapshots of the registered guards of
// one kind, at each collection; its one label is name.
type gauge struct {
	name, help string
	kind       telemetry.Kind
	value      func(telemetry.Snapshot) float64
	desc       *prometheus.Desc
}

// newGauges returns the gauges of every field of a telemetry.Snapshot but
// the breaker's state (resilience_circuit_breaker_state, one series per
// state) and Refused (resilience_guard_refused_total).
func newGauges() []gauge {
	gs := []gauge{
		{"resilience_circuit_breaker_forced", "1 while the breaker is held open or closed by hand (ForceOpen, ForceClosed), else 0.", telemetry.Breaker,
			func(s telemetry.Snapshot) float64 { return b2f(s.Breaker.Forced) }, nil},
		{"resilience_circuit_breaker_generation", "The breaker's generation: 1 when made, one more at each transition, ForceOpen, ForceClosed or Reset.", telemetry.Breaker,
			func(s telemetry.Snapshot) float64 { return float64(s.Breaker.Generation) }, nil},
		{"resilience_circuit_breaker_window_calls", "Calls counted in the current state (over the sliding window while closed).", telemetry.Breaker,
			func(s telemetry.Snapshot) float64 { return float64(s.Breaker.Calls) }, nil},
		{"resilience_circuit_breaker_window_successes", "Successes counted in the current state (over the sliding window while closed).", telemetry.Breaker,
			func(s telemetry.Snapshot) float64 { return float64(s.Breaker.Successes) }, nil},
		{"resilience_circuit_breaker_window_failures", "Failures counted in the current state (over the sliding window while closed).", telemetry.Breaker,
			func(s telemetry.Snapshot) float64 { return float64(s.Breaker.Failures) }, nil},
		{"resilience_circuit_breaker_window_slow", "Slow calls counted in the current state (over the sliding window while closed).", telemetry.Breaker,
			func(s telemetry.Snapshot) float64 { return float64(s.Breaker.Slow) }, nil},
		{"resilience_circuit_breaker_failure_ratio", "Failures / calls counted in the current state, in [0, 1].", telemetry.Breaker,
			func(s telemetry.Snapshot) float64 { return s.Breaker.FailureRatio }, nil},
		{"resilience_circuit_breaker_consecutive_successes", "Successes in a row, in the current state.", telemetry.Breaker,
			func(s telemetry.Snapshot) float64 { return float64(s.Breaker.ConsecutiveSuccesses) }, nil},
		{"resilience_circuit_breaker_consecutive_failures", "Failures in a row, in the current state.", telemetry.Breaker,
			func(s telemetry.Snapshot) float64 { return float64(s.Breaker.ConsecutiveFailures) }, nil},
		{"resilience_circuit_breaker_rejected", "Calls refused in the current state.", telemetry.Breaker,
			func(s telemetry.Snapshot) float64 { return float64(s.Breaker.Refused) }, nil},
		{"resilience_bulkhead_limit", "The most calls the bulkhead lets run at once.", telemetry.Bulkhead,
			func(s telemetry.Snapshot) float64 { return float64(s.Bulkhead.Limit) }, nil},
		{"resilience_bulkhead_in_flight", "Calls holding a slot of the bulkhead now.", telemetry.Bulkhead,
			func(s telemetry.Snapshot) float64 { return float64(s.Bulkhead.InFlight) }, nil},
		{"resilience_bulkhead_queued", "Calls waiting in the bulkhead's queue now.", telemetry.Bulkhead,
			func(s telemetry.Snapshot) float64 { return float64(s.Bulkhead.Queued) }, nil},
		{"resilience_rate_limiter_rate", "Tokens the rate limiter adds per second.", telemetry.RateLimit,
			func(s telemetry.Snapshot) float64 { return s.Limiter.Rate }, nil},
		{"resilience_rate_limiter_burst", "The most tokens the rate limiter's bucket holds.", telemetry.RateLimit,
			func(s telemetry.Snapshot) float64 { return float64(s.Limiter.Burst) }, nil},
		{"resilience_rate_limiter_tokens", "Tokens in the rate limiter's bucket now (negative: owed to waiters).", telemetry.RateLimit,
			func(s telemetry.Snapshot) float64 { return s.Limiter.Tokens }, nil},
	}
	for i := range gs {
		gs[i].desc = prometheus.NewDesc(gs[i].name, gs[i].help, []string{"name"}, nil)
	}
	return gs
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// breakerStates are the values of the state label, each a series of its
// own: 1 for the breaker's state, 0 for the others.
var breakerStates = []string{telemetry.StateClosed, telemetry.StateOpen, telemetry.StateHalfOpen}
