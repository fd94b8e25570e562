package resilienceprom_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/resilienceprom"
	"github.com/f0b5b96b/resilience/resilienceprom/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// downError is the dependency's failure in the scripted outage.
type downError struct{}

func (downError) Error() string { return "dependency down" }

// outage runs exporttest.Outage on a Collector with opts: a pipeline
// (retry > breaker, with the registry as their one observer, and no
// Measure layer: the retry's duration events time the calls and the
// attempts) through an outage on a fake clock: two healthy calls, a call whose two attempts fail and trip the
// breaker, a call the open breaker refuses, then, after the cooldown, a
// trial that closes it and one more success. The registry also holds a
// fake bulkhead and rate limiter.
func outage(t *testing.T, opts ...resilienceprom.Option) *resilienceprom.Collector {
	t.Helper()
	clk := clock.NewFake()
	reg := telemetry.NewRegistry()
	c := newCollector(t, append([]resilienceprom.Option{resilienceprom.WithRegistry(reg), resilienceprom.WithClock(clk)}, opts...)...)
	exporttest.Outage(t, clk, reg, reg, resilience.Policy[string]{}, resilience.Policy[string]{}, downError{})
	return c
}

// outageBuckets are the bucket bounds of the scripted outage's
// histograms in TestScriptedOutage.
var outageBuckets = []float64{0.005, 0.025, 0.1}

// wantOutage is the exposition the scripted outage must produce, with
// buckets outageBuckets: calls of 10ms, a failing call of two attempts of
// 20ms, a refusal at once, and a retry's wait of 0.
var wantOutage = `
# HELP resilience_calls_total Calls through a policy, by outcome: success, failure, rejected (a guard refused it) or ignored.
# TYPE resilience_calls_total counter
resilience_calls_total{name="prices",outcome="failure",policy="breaker"} 2
resilience_calls_total{name="prices",outcome="rejected",policy="breaker"} 1
resilience_calls_total{name="prices",outcome="failure",policy="retry"} 2
resilience_calls_total{name="prices",outcome="success",policy="pipeline"} 4
resilience_calls_total{name="prices",outcome="failure",policy="pipeline"} 1
resilience_calls_total{name="prices",outcome="rejected",policy="pipeline"} 1
# HELP resilience_events_total Events the policies reported, by event (package telemetry's table).
# TYPE resilience_events_total counter
resilience_events_total{event="breaker.closed",name="prices",policy="breaker"} 1
resilience_events_total{event="breaker.failure",name="prices",policy="breaker"} 2
resilience_events_total{event="breaker.half_opened",name="prices",policy="breaker"} 1
resilience_events_total{event="breaker.opened",name="prices",policy="breaker"} 1
resilience_events_total{event="breaker.refused",name="prices",policy="breaker"} 1
resilience_events_total{event="retry.attempt",name="prices",policy="retry"} 7
resilience_events_total{event="retry.attempt_failed",name="prices",policy="retry"} 3
resilience_events_total{event="retry.call",name="prices",policy="retry"} 6
resilience_events_total{event="retry.gave_up",name="prices",policy="retry"} 2
resilience_events_total{event="retry.waiting",name="prices",policy="retry"} 1
# HELP resilience_call_duration_seconds Duration of calls (a retry's calls, or through a Measure layer), retries and waits included.
# TYPE resilience_call_duration_seconds histogram
` +
	histogram("resilience_call_duration_seconds", `name="prices",outcome="success"`, outageBuckets, 0.01, 0.01, 0.01, 0.01) +
	histogram("resilience_call_duration_seconds", `name="prices",outcome="failure"`, outageBuckets, 0.04) +
	histogram("resilience_call_duration_seconds", `name="prices",outcome="rejected"`, outageBuckets, 0) +
	`# HELP resilience_attempt_duration_seconds Duration of each attempt of a call, by attempt number.
# TYPE resilience_attempt_duration_seconds histogram
` +
	histogram("resilience_attempt_duration_seconds", `attempt="1",name="prices",outcome="success"`, outageBuckets, 0.01, 0.01, 0.01, 0.01) +
	histogram("resilience_attempt_duration_seconds", `attempt="1",name="prices",outcome="failure"`, outageBuckets, 0.02) +
	histogram("resilience_attempt_duration_seconds", `attempt="2",name="prices",outcome="failure"`, outageBuckets, 0.02) +
	histogram("resilience_attempt_duration_seconds", `attempt="1",name="prices",outcome="rejected"`, outageBuckets, 0) +
	`# HELP resilience_wait_duration_seconds Waits the policies reported: a retry's backoff, time in a bulkhead's queue, for a rate limiter's token.
# TYPE resilience_wait_duration_seconds histogram
` +
	histogram("resilience_wait_duration_seconds", `event="retry.waiting",name="prices",policy="retry"`, outageBuckets, 0) +
	`# HELP resilience_exporter_dropped_series Series of the last collection left out: they read as a series sent before (a name once sanitised, or a guard's value named as another kind's), a guard's value is named like one of the Collector's own metrics or from bytes that are not valid UTF-8 (its kind, name or unit), or a label is not valid UTF-8.
# TYPE resilience_exporter_dropped_series gauge
resilience_exporter_dropped_series 0
# HELP resilience_exporter_sanitized_series Series of the last collection whose name was not valid UTF-8, sent with the invalid bytes replaced by U+FFFD.
# TYPE resilience_exporter_sanitized_series gauge
resilience_exporter_sanitized_series 0
` +
	`# HELP resilience_guard_refused_total Calls a registered guard has refused since it was made, from its snapshot.
# TYPE resilience_guard_refused_total counter
resilience_guard_refused_total{name="prices",policy="breaker"} 1
resilience_guard_refused_total{name="db",policy="bulkhead"} 5
resilience_guard_refused_total{name="api",policy="ratelimit"} 7
# HELP resilience_guard_state 1, with the state of a registered guard that has states (a breaker: closed, open, half-open) as its label, from its snapshot.
# TYPE resilience_guard_state gauge
resilience_guard_state{name="prices",policy="breaker",state="closed"} 1
# HELP resilience_breaker_open_for_seconds Time since the breaker last opened; 0 unless it is open.
# TYPE resilience_breaker_open_for_seconds gauge
resilience_breaker_open_for_seconds{name="prices"} 0
# HELP resilience_breaker_cooldown_left_seconds Time until the open breaker turns half-open; 0 unless it is open, and while held open by ForceOpen.
# TYPE resilience_breaker_cooldown_left_seconds gauge
resilience_breaker_cooldown_left_seconds{name="prices"} 0
# HELP resilience_breaker_window_calls Calls counted: over the sliding window while closed, if the breaker has one (WindowCalls, WindowDuration, or a ratio rule: the last 100 calls); else since the current state began (half-open: the trials).
# TYPE resilience_breaker_window_calls gauge
resilience_breaker_window_calls{name="prices"} 1
# HELP resilience_breaker_window_failures Failures counted: over the sliding window while closed, if the breaker has one; else since the current state began.
# TYPE resilience_breaker_window_failures gauge
resilience_breaker_window_failures{name="prices"} 0
# HELP resilience_breaker_failure_ratio window_failures / window_calls, in [0, 1]; 0 without calls.
# TYPE resilience_breaker_failure_ratio gauge
resilience_breaker_failure_ratio{name="prices"} 0
# HELP resilience_breaker_window_refused Calls refused since the current state began (not a window: refusals happen while open or half-open).
# TYPE resilience_breaker_window_refused gauge
resilience_breaker_window_refused{name="prices"} 0
# HELP resilience_breaker_window_successes Successes counted: over the sliding window while closed, if the breaker has one; else since the current state began.
# TYPE resilience_breaker_window_successes gauge
resilience_breaker_window_successes{name="prices"} 1
# HELP resilience_breaker_window_slow Slow calls counted: over the sliding window while closed, if the breaker has one; else since the current state began.
# TYPE resilience_breaker_window_slow gauge
resilience_breaker_window_slow{name="prices"} 0
# HELP resilience_breaker_consecutive_failures Failures in a row, in the current state.
# TYPE resilience_breaker_consecutive_failures gauge
resilience_breaker_consecutive_failures{name="prices"} 0
# HELP resilience_breaker_consecutive_successes Successes in a row, in the current state.
# TYPE resilience_breaker_consecutive_successes gauge
resilience_breaker_consecutive_successes{name="prices"} 1
# HELP resilience_breaker_generation The breaker's generation: 1 when made, one more at each transition, ForceOpen, ForceClosed or Reset.
# TYPE resilience_breaker_generation gauge
resilience_breaker_generation{name="prices"} 4
# HELP resilience_breaker_forced 1 while the breaker is held open or closed by hand (ForceOpen, ForceClosed), else 0.
# TYPE resilience_breaker_forced gauge
resilience_breaker_forced{name="prices"} 0
# HELP resilience_bulkhead_limit The most calls the bulkhead lets run at once.
# TYPE resilience_bulkhead_limit gauge
resilience_bulkhead_limit{name="db"} 8
# HELP resilience_bulkhead_in_flight Calls holding a slot of the bulkhead now.
# TYPE resilience_bulkhead_in_flight gauge
resilience_bulkhead_in_flight{name="db"} 3
# HELP resilience_bulkhead_queued Calls waiting in the bulkhead's queue now.
# TYPE resilience_bulkhead_queued gauge
resilience_bulkhead_queued{name="db"} 2
# HELP resilience_ratelimit_rate_per_second Tokens the rate limiter adds per second.
# TYPE resilience_ratelimit_rate_per_second gauge
resilience_ratelimit_rate_per_second{name="api"} 100
# HELP resilience_ratelimit_burst The most tokens the rate limiter's bucket holds.
# TYPE resilience_ratelimit_burst gauge
resilience_ratelimit_burst{name="api"} 20
# HELP resilience_ratelimit_tokens Tokens in the rate limiter's bucket now (negative: owed to waiters).
# TYPE resilience_ratelimit_tokens gauge
resilience_ratelimit_tokens{name="api"} -1.5
`

// TestScriptedOutage: after the scripted outage, the Collector's
// exposition is exactly wantOutage: every metric, label and value.
func TestScriptedOutage(t *testing.T) {
	c := outage(t, resilienceprom.WithBuckets(outageBuckets...))
	if err := testutil.CollectAndCompare(c, strings.NewReader(wantOutage)); err != nil {
		t.Error(err)
	}
}
