// Package resilienceprom exposes what the resilience policies do as
// Prometheus metrics: a prometheus.Collector over the events the policies
// report, the durations of the calls and their attempts (the retry's
// retry.call and retry.attempt events, or Measure layers), and the live
// snapshots of the guards in a telemetry.Registry.
//
//	reg := telemetry.NewRegistry()
//	if _, err := resilienceprom.New(prometheus.DefaultRegisterer, resilienceprom.WithRegistry(reg)); err != nil {
//		return err // the registerer refused the Collector: registered twice, or a metric of the same name
//	}
//	b := breaker.New(breaker.WithName("prices"), breaker.WithObserver(reg))
//	if err := reg.Register(b); err != nil {
//		return err // a breaker named "prices" is registered already
//	}
//	p := resilience.Then(retry.New[*http.Response](retry.WithName("prices"), retry.WithObserver(reg)), breaker.Policy[*http.Response](b))
//	http.Handle("/metrics", promhttp.Handler())
//
// The policies' one observer is the registry, which passes their events on
// to the Collector (WithRegistry adds it to the registry's observers): do
// not give them the Collector as well, or their events count twice.
//
// # Entry points
//
//   - New(reg), with WithRegistry, WithBuckets, WithClock: a Collector
//     registered with reg (as resilienceotel.New(mp) reports to mp), a
//     telemetry.Observer that observes the registry
//   - Measure, Layers: policy layers that time and count calls and
//     attempts, for a chain without a retry
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
//	resilience_guard_state                  gauge      policy, name, state
//	resilience_<kind>_<value>[_<unit>]      gauge or   name
//	                                        counter
//	resilience_exporter_sanitized_series    gauge
//	resilience_exporter_dropped_series      gauge
//
// policy is the policy's kind ("breaker", "retry", "bulkhead", "ratelimit",
// ...; "pipeline" for the calls' durations), name its name (Config.Name,
// or the name given to Measure), event the event's Type from package telemetry's table
// ("breaker.opened", ...), outcome one of success, failure, rejected (a
// guard refused the call) and ignored (the caller gave up, or a breaker's
// classifier ignored the outcome), attempt the attempt's number ("1" for
// the first, at most 10 for the retry's events and Measure's attempts for
// a Measure; "" for a Measure without a Call layer), state
// the guard's state (for a breaker: closed, open or half-open).
//
// resilience_calls_total counts the events that are a call's outcome
// (breaker.failure: failure; breaker.ignored: ignored; breaker.refused,
// bulkhead.refused, ratelimit.refused, adaptive.refused: rejected; retry.gave_up,
// timeout.expired: failure) and the calls of the call duration events
// (retry.call, any "kind.call": see telemetry.WhatCall) and of Measure's
// Call layers (policy "pipeline", all four outcomes; an event's outcome
// is read from its Err, context.Canceled being ignored). Successes are
// counted there only: the guards do not report them (a success costs no
// event), and their snapshots count them per state, not in total.
// resilience_call_duration_seconds and
// resilience_attempt_duration_seconds record the durations of those
// events (retry.call, retry.attempt) and of Measure's layers; events and
// a Measure of one name add up.
// resilience_wait_duration_seconds records the waits of retry.waiting,
// bulkhead.queued_admitted, ratelimit.waited and bulkhead.refused (the last
// when the call waited in the queue).
//
// The guards' metrics are read at each scrape from the Snapshot of every
// guard registered in the registry given to WithRegistry, and named from
// what each guard describes, never from its kind: so a guard of your own
// is exported like the built-in ones. resilience_guard_refused_total is
// each guard's Refused; resilience_guard_state is 1, with the guard's
// state as a label, for each guard that has states (alert on
// resilience_guard_state{state="open"}); and each of the guard's Values is
// a metric of its own, resilience_<kind>_<value name>, then the unit's
// suffix ("s": _seconds, "By": _bytes, "{token}/s": _per_second; none for
// a count or a ratio), then _total for a counter, with the value's help
// and the label name. A breaker gives resilience_breaker_window_calls,
// _window_failures, _failure_ratio, _window_refused, _window_successes,
// _window_slow, _consecutive_failures, _consecutive_successes,
// _generation and _forced; a bulkhead resilience_bulkhead_limit,
// _in_flight and _queued; a rate limiter resilience_ratelimit_rate_per_second,
// _burst and _tokens; the others as their Snapshot methods list. A value
// that would take the name of one of the Collector's own metrics is left
// out (counted in resilience_exporter_dropped_series). Describe describes
// the values of the guards registered when it is called: a pedantic
// registry rejects those of guards registered after the Collector.
//
// The breaker's counted values (window_calls, window_failures,
// window_successes, window_slow, and failure_ratio, their ratio) are what
// its rules see: over its sliding window while it is closed and has one
// (WindowCalls, WindowDuration, or a FailureRatio or SlowCallRatio rule,
// the last 100 calls by default); otherwise, and while open or half-open,
// since its current state began: a breaker with only a Threshold rule
// counts the calls since it last closed, a half-open one its trials.
// window_refused is always since the current state began, and the
// consecutive counts are within it. Each value's help says so.
//
// No name loses a scrape: a name that is not valid UTF-8 (which WithName
// options and the registry reject, but a guard or event source of one's
// own may report) is sent with its invalid bytes replaced by U+FFFD, and
// counted in resilience_exporter_sanitized_series; a series that reads,
// once sanitised, as one sent before is left out, and counted in
// resilience_exporter_dropped_series (both of the last collection). So is
// a guard's value whose metric another kind's value names too (kinds
// "my-cache" and "my_cache", or kind "a_b"'s value "c" and kind "a"'s
// value "b_c": the first series sent stays), every series of a guard
// whose kind is not valid UTF-8 (its guard_state, guard_refused_total and
// values alike), and a guard's value whose name or unit is not valid
// UTF-8: a kind, a value's name and a unit make metric names, which
// cannot show U+FFFD, and the underscore the bad bytes would become
// would read as another guard's metric.
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
