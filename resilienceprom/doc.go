// Package resilienceprom exposes what the resilience policies do as
// Prometheus metrics: a prometheus.Collector over the events the policies
// report, the calls and attempts through Measure layers, and the live
// snapshots of the guards in a telemetry.Registry.
//
//	reg := telemetry.NewRegistry()
//	c := resilienceprom.New(resilienceprom.WithRegistry(reg))
//	prometheus.MustRegister(c)
//	b := breaker.New(breaker.WithName("prices"), breaker.WithObserver(c))
//	err := reg.Register(b)
//	http.Handle("/metrics", promhttp.Handler())
//
// # Entry points
//
//   - New, with WithRegistry, WithBuckets, WithClock: a Collector, the
//     telemetry.Observer to give to the policies' WithObserver
//   - Measure, Layers: policy layers that time and count calls and attempts
//
// # Metrics
//
//	metric                                  type       labels
//	resilience_calls_total                  counter    policy, name, outcome
//	resilience_events_total                 counter    policy, name, event
//	resilience_call_duration_seconds        histogram  name, outcome
//	resilience_attempt_duration_seconds     histogram  name, attempt, outcome
//	resilience_wait_duration_seconds        histogram  policy, name, event
//	resilience_guard_refused_total          counter    policy, name
//	resilience_circuit_breaker_state        gauge      name, state
//	resilience_circuit_breaker_*            gauges     name
//	resilience_bulkhead_*                   gauges     name
//	resilience_rate_limiter_*               gauges     name
//	resilience_exporter_sanitized_series    gauge
//	resilience_exporter_dropped_series      gauge
//
// policy is the policy's kind ("breaker", "retry", "bulkhead", "ratelimit",
// ...; "pipeline" for Measure), name its name (Config.Name, or the name
// given to Measure), event the event's Type from package telemetry's table
// ("breaker.opened", ...), outcome one of success, failure, rejected (a
// guard refused the call) and ignored (the caller gave up, or a breaker's
// classifier ignored the outcome), attempt the attempt's number ("1" for
// the first, at most Measure's attempts; "" without a Call layer), state
// closed, open or half-open.
//
// resilience_calls_total counts the events that are a call's outcome
// (breaker.failure: failure; breaker.ignored: ignored; breaker.refused,
// bulkhead.refused, ratelimit.refused: rejected; retry.gave_up,
// timeout.expired: failure) and the calls through Measure's Call layers
// (policy "pipeline", all four outcomes). Successes are counted by Measure
// only: the policies do not report them (a success costs no event), and the
// guards' snapshots count them per state, not in total.
// resilience_wait_duration_seconds records the waits of retry.waiting,
// bulkhead.queued_admitted, ratelimit.waited and bulkhead.refused (the last
// when the call waited in the queue).
//
// The gauges are read at each scrape from the Snapshot of every guard
// registered in the registry given to WithRegistry: for a breaker,
// resilience_circuit_breaker_state (one series per state: 1 for the
// breaker's, 0 for the others), _forced, _generation, _window_calls,
// _window_successes, _window_failures, _window_slow (the counts of the
// current state, over the window while closed), _failure_ratio,
// _consecutive_successes, _consecutive_failures and _rejected (in the
// current state); for a bulkhead, resilience_bulkhead_limit, _in_flight and
// _queued; for a rate limiter, resilience_rate_limiter_rate (tokens per
// second), _burst and _tokens. resilience_guard_refused_total is each
// guard's Refused.
//
// No name loses a scrape: a name that is not valid UTF-8 (which WithName
// options and the registry reject, but a guard or event source of one's
// own may report) is sent with its invalid bytes replaced by U+FFFD, and
// counted in resilience_exporter_sanitized_series; a series that reads,
// once sanitised, as one sent before is left out, and counted in
// resilience_exporter_dropped_series (both of the last collection).
//
// # Cost
//
// Nothing on the calls' path is Prometheus work: an event is counted by a
// telemetry.Counter (one map read and one atomic add, no allocation), a
// wait or a duration is one atomic add in a bucket and one to a sum, and
// Collect turns the counts into constant metrics when Prometheus scrapes. A
// success through a closed breaker emits no event, so attaching the
// Collector costs that path nothing. A Measure layer costs two clock
// readings and a few atomic adds per call or attempt, and Call allocates
// one small context per call.
package resilienceprom
