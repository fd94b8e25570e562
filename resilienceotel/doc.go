// Package resilienceotel reports what the resilience policies do as
// OpenTelemetry metrics: their events, the calls and attempts through
// them, and the live state of the shared guards; and as span events on
// the caller's span: what the pipeline did with one call.
//
//	reg := telemetry.NewRegistry()
//	m, err := resilienceotel.New(otel.GetMeterProvider(), resilienceotel.WithRegistry(reg)) // m observes reg
//	if err != nil {
//		return err // the MeterProvider failed to make an instrument or to register the callback
//	}
//	defer m.Close()
//	b := breaker.New(breaker.WithName("prices"), breaker.WithObserver(reg))
//	if err := reg.Register(b); err != nil {
//		return err // a breaker named "prices" is registered already
//	}
//	p := resilience.Then(retry.New[*http.Response](retry.WithName("prices"), retry.WithObserver(reg)), breaker.Policy[*http.Response](b), timeout.New[*http.Response](time.Second))
//
// The policies' one observer is the registry, which passes their events on
// to the Metrics (WithRegistry adds it to the registry's observers): do
// not give them the Metrics as well, or their events count twice. The
// retry's retry.call and retry.attempt events carry the durations of each
// call and attempt (resilience.call.duration, resilience.attempt.duration),
// with no layer in the chain.
//
// # Entry points
//
//   - New(mp), with WithRegistry, WithKeys, WithClock: a Metrics
//     reporting to mp, a telemetry.Observer that observes the registry
//   - Measure, Layers: policy layers that time and count calls and
//     attempts, for a chain without a retry
//   - Trace, TraceLayers, with TraceBreaker, TraceClock: policy layers that
//     record each call's attempts, waits, refusals, hedges and fallback on
//     the caller's span
//   - Metrics.Close: stops reporting
//
// # Instruments
//
// There are no OpenTelemetry semantic conventions for resilience yet; the
// names follow the conventions' naming rules, durations are in seconds.
//
//	instrument                            kind                unit         attributes
//	resilience.calls                      counter             {call}       resilience.policy.type, resilience.policy.name, resilience.outcome, error.type, resilience.key
//	resilience.events                     counter             {event}      resilience.policy.type, resilience.policy.name, event.name, error.type, resilience.key
//	resilience.call.duration              histogram           s            resilience.policy.name, resilience.outcome, error.type
//	resilience.attempt.duration           histogram           s            resilience.policy.name, resilience.attempt, resilience.outcome, error.type
//	resilience.wait.duration              histogram           s            resilience.policy.type, resilience.policy.name, event.name, resilience.key
//	resilience.guard.refused              counter (async)     {call}       resilience.policy.type, resilience.policy.name
//	resilience.exporter.sanitized         counter (async)     {name}       none
//	resilience.exporter.dropped           counter (async)     {series}     none
//	resilience.guard.state                gauge               1            resilience.policy.type, resilience.policy.name, resilience.guard.state
//	resilience.<kind>.<value>             gauge or counter    the value's  resilience.policy.name
//	                                      (async)
//
// resilience.calls counts calls through a policy by resilience.outcome:
// success, failure, rejected (a guard refused the call) or ignored (the
// caller gave up, or a breaker's classifier ignored the outcome). Its
// sources are the events that are a call's outcome (breaker.failure:
// failure; breaker.ignored: ignored; breaker.refused, bulkhead.refused,
// ratelimit.refused, adaptive.refused: rejected; retry.gave_up, timeout.expired: failure),
// and the call duration events (retry.call, any "kind.call": see
// telemetry.WhatCall) and Call layers of Measure (resilience.policy.type
// "pipeline", all four outcomes; an event's outcome is read from its Err,
// context.Canceled being ignored). Successes are counted there only: the
// guards do not report them (a success costs no event) and their
// snapshots count them per state, not in total. resilience.call.duration
// and resilience.attempt.duration record the durations of those events
// (retry.call, retry.attempt: attempt numbers at most 10) and of
// Measure's layers; events and a Measure of one name add up.
//
// resilience.events counts every event by event.name, the Type of package
// telemetry's table ("breaker.opened", "retry.waiting", ...); that table
// maps each to its Polly event. resilience.wait.duration records the waits
// of retry.waiting, bulkhead.queued_admitted, ratelimit.waited and
// bulkhead.refused (the last when the call waited in the queue).
//
// The guards' instruments are read from the Snapshot of every guard
// registered in the registry given to WithRegistry, at each collection,
// and named from what each guard describes, never from its kind: so a
// guard of your own is exported like the built-in ones.
// resilience.guard.refused is each guard's Refused; resilience.guard.state
// is 1, with the guard's state as an attribute, for each guard that has
// states; and each of the guard's Values is an instrument of its own,
// resilience.<kind>.<value name> (a Float64ObservableGauge, or a
// Float64ObservableCounter for a counter), with the value's unit and its
// help as description. A breaker gives resilience.breaker.window_calls,
// .window_failures, .failure_ratio, .window_refused, .window_successes,
// .window_slow, .consecutive_failures, .consecutive_successes, .generation
// and .forced; a bulkhead resilience.bulkhead.limit, .in_flight and
// .queued; a rate limiter resilience.ratelimit.rate, .burst and .tokens;
// the others as their Snapshot methods list. The instruments of the
// guards registered when New runs are made by New. A value first seen by
// a collection (of a guard registered later) cannot get its instrument in
// that collection, as the SDK makes instruments under the lock it
// collects under: the collection starts a goroutine that makes it and puts
// a callback that observes it in place of the one before, and the value
// is reported by the collections that start after that. That is often the
// next one, but not always: the collections that start sooner
// (back-to-back ManualReader.Collect calls, say) report the guard's
// resilience.guard.refused and resilience.guard.state, not yet its
// values. A collection while the callback that observes the new
// instruments takes over from the one before it reports each count once,
// or, rarely, none of this Metrics' counts and gauges: never twice.
//
// Two guards never share a series. Guards of one name whose kinds give a
// value one instrument name (kinds "my queue" and "my_queue", or "Mine"
// and "mine": OpenTelemetry's instrument names are case-insensitive) would
// report two values as one series, of which a gauge keeps one and a
// counter adds them; guards of one name whose kinds read alike once valid
// UTF-8 would share a resilience.guard.refused and resilience.guard.state
// series. At each collection the guard that comes first in the registry's
// order (that of telemetry.Registry.Snapshots: by name, then kind; of two
// series that collide in resilienceprom too, it keeps the same guard's)
// keeps such a series, and the other's is left out, counted in
// resilience.exporter.dropped (one per series per collection). So is a
// guard's value whose instrument name is one of the Metrics' own (kind
// "guard" with a value "state", say).
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
// # Attributes
//
//	resilience.policy.type            the policy's kind ("breaker", "retry", "bulkhead", "ratelimit", ...), "pipeline" for Measure
//	resilience.policy.name            the policy's name (its Config.Name), the name given to Measure
//	resilience.outcome                success | failure | rejected | ignored
//	event.name                        the event's Type
//	error.type                        the class of the error, absent without one (see below)
//	resilience.attempt                the attempt's number, 1 for the first, at most Measure's attempts
//	resilience.key                    the key of a keyed guard, only with WithKeys
//	resilience.guard.state            the guard's state: for a breaker, closed | open | half-open
//
// error.type is the name of the library's condition the error matches
// (breaker.open, breaker.forced_open, breaker.too_many_trials, bulkhead.full,
// bulkhead.queue_timeout, ratelimit.limited, refused, timeout,
// context.deadline_exceeded, context.canceled, retry.attempts,
// retry.max_elapsed, retry.max_wait, retry.budget_exhausted); for an HTTP
// failure (a resiliencehttp.StatusError, or any error with an
// HTTPStatusCode() int method) its status code ("503"), as OpenTelemetry's
// HTTP conventions have it; else the error's Go type ("*url.Error"),
// looking through fmt.Errorf's and errors.Join's wrappers and, for a
// retry.Error, at its last attempt's error.
// At most 64 distinct values are reported; later ones read "_OTHER".
// resilience.key is off by default: a keyed breaker's events count under its
// name; WithKeys(n) turns it on (today only a breaker.Keyed's events carry
// a key: a ratelimit.Keyed's leave it empty) with at most n keys per guard, the later ones
// reading "_OTHER", so hostile keys cannot grow the series without bound.
//
// No name breaks an export. OTLP sends attribute values as protobuf
// strings, which must be valid UTF-8, and one bad value fails the export
// of the whole batch. The policies' WithName options, Measure and the
// registry reject a name that is not valid UTF-8, but a guard or event
// source of one's own may still report one, and a breaker.Keyed's keys
// are the caller's: a name or key that is not valid UTF-8 is reported with
// its invalid bytes replaced by U+FFFD, and counted in
// resilience.exporter.sanitized (once per event, and per guard snapshot
// read at a collection). So is a guard's kind (its
// resilience.policy.type, which the registry does not check), once per
// snapshot read; an event's Type (its event.name, and its kind, its
// resilience.policy.type), once per event; and a guard's value's unit or
// help that is not valid UTF-8, counted once when its instrument is made.
// A value's instrument name is ASCII only: the characters of the kind
// and the value's name other than ASCII letters, digits, '_', '.', '-'
// and '/' read as underscores. So every attribute value, unit,
// description and instrument name the Metrics reports is valid UTF-8.
//
// # Traces
//
// Trace returns two layers, Call (outermost, outside any fallback) and
// Attempt (inside the retry and the hedge, outside the guards whose
// refusals it should see):
//
//	t := resilienceotel.Trace[*http.Response]("prices", resilienceotel.TraceBreaker(b))
//	p := resilience.Then(t.Call, retry.New[*http.Response](), t.Attempt, breaker.Policy[*http.Response](b), timeout.New[*http.Response](time.Second))
//
// They write on trace.SpanFromContext of the call's context, and start no
// span. Each event carries resilience.policy.name:
//
//	event                        when                                              attributes
//	resilience.attempt           an attempt ended                                  resilience.attempt, resilience.outcome, resilience.attempt.duration (s), error.type, server.address, resilience.breaker.state
//	resilience.retry.wait        an attempt starts after an earlier one ended      resilience.attempt (the new one), resilience.wait.duration (s)
//	resilience.refused           a guard refused an attempt, or the call before    error.type (the guard's condition), resilience.guard.name, resilience.retry_after (s)
//	                             any attempt
//	resilience.hedge.launched    an attempt starts while another runs              resilience.attempt
//	resilience.hedge.won         the first of concurrent attempts to succeed       resilience.attempt
//	resilience.fallback          the call succeeded though every attempt failed    error.type, server.address (of the replaced error)
//
// When the call returns, the span gets resilience.policy.name,
// resilience.attempts (attempts that reached the Attempt layer) and
// resilience.outcome; its status is left to its owner. server.address is
// the host of a *url.Error in the error's chain (invalid UTF-8 bytes, as
// a percent-escaped host can hold, replaced by U+FFFD), absent otherwise;
// resilience.breaker.state, with TraceBreaker, is the breaker's state when
// the attempt started; resilience.retry_after is absent without a hint
// and for resilience.Never (0 is a hint: retry at once);
// resilience.guard.name is the guard's name as it gave it (invalid UTF-8
// bytes replaced by U+FFFD), absent when it has none.
// The layers see the errors, not the policies' events: a wait is the
// measured gap between two attempts, a hedge's winner is the first copy
// to succeed, and a fallback is inferred from a success after failed
// attempts. A call whose span does not record goes through both layers
// without allocating; a recording one allocates a context and the events'
// attributes.
//
// # Cost
//
// Observing an event does no OpenTelemetry work but record a wait: it
// counts the event in a map of atomic counters (no lock, no allocation for
// a series seen before), and the counts are reported at collection. A
// success through a closed breaker emits no event, so attaching the
// exporter costs that path nothing. A Measure layer costs two clock readings
// and one histogram record per call or attempt, and Call allocates one
// small context per call.
package resilienceotel
