// Package policytest holds the black-box, model-based property suites of the
// library, run with pgregory.net/rapid under `go test`. It has no API; each
// suite is a _test.go file:
//
//   - compose_test.go: the composition laws of resilience.Policy (identity,
//     associativity, fallback called iff error, panic propagation) over random
//     chains and ops, against a reference model of nested calls.
//   - donectx_test.go: the context rule shared by every built-in policy
//     (breaker, bulkhead, rate limiter, retry, timeout, hedge): a call whose
//     context is already done returns ctx.Err() and runs nothing.
//   - bulkhead_test.go: a bulkhead under random schedules of acquire,
//     try-acquire, release, cancellation and MaxWait expiry, against a model
//     of slots and a FIFO queue (run in a testing/synctest bubble).
//   - ratelimit_test.go: the token-bucket bounds over random arrival times
//     (exact for Every(d), for any float rate), exact Retry-After hints,
//     and the keyed limiter's cap and least-recently-used order.
//   - retry_test.go: retry.New against a model loop, over random schedules
//     of attempt latencies, failures, Retry-After hints ("never" included),
//     permanent errors, cancellations and caller deadlines (attempts,
//     MaxElapsed, backoff bounds, no wait after cancellation, none that would
//     end at or past the deadline, the Reason of giving up); and the retry
//     Budget's bounds over random schedules of executions.
//   - hedge_test.go: hedge.New in a testing/synctest bubble over random
//     latencies, failures, Retry-After hints ("never" included), refusals,
//     MaxWait, context-ignoring attempts and cancellations (at most
//     1+MaxHedges attempts, none outlives the call, none starts while a
//     hint holds or after a refusal or a hint past MaxWait, the call
//     returns when its last attempt does, first success wins).
//   - order_test.go: the README's recommended order (fallback > retry >
//     hedge > breaker > timeout) fails fast behind an open breaker.
//   - adaptive_test.go: the adaptive concurrency limiter against a model
//     of its admissions, over random configurations (algorithms, one of
//     them returning wild limits: NaN, ±Inf, huge, negative), priorities,
//     outcomes and clock steps: a call is admitted iff fewer calls are in
//     flight than its priority's ceiling of the current limit (so in
//     flight never exceeds the limit at an admission), and the limit
//     stays in [Min, Max].
//   - throttle_test.go: the client-side throttler against an exact model
//     of its time buckets: the probability is the SRE formula, in [0, 1)
//     and 0 when all calls succeed; a request is refused iff its draw is
//     below it; refusals count neither as requests nor as accepts.
//   - breaker_test.go: policy/breaker as a rapid state machine against a
//     reference model, over random configurations and schedules (admit,
//     report in any order and twice, stale reports, Record, clock steps that
//     land on the cooldown's end, a trial's expiry and bucket boundaries,
//     manual control, calls through the Policy adapter, panics);
//     breaker_stress_test.go: the same breaker from many goroutines (trial
//     bound, no lost permits, counts that add up, ordered callbacks);
//     breaker_keyed_test.go: breaker.Keyed against a model of its two
//     recency lists, over random uses of keys and state changes of held
//     breakers (tracked keys and their order, what is forgotten, what is
//     reported).
//   - guardapi_test.go (not a property suite): the exported API of the
//     guards, read from the policies' sources with go/parser: every core
//     guard type has Name and Snapshot and its package the options listed;
//     and the readers of a registry (the dashboard and its page, Health,
//     both exporters) name no guard kind.
//
// Run more cases with, e.g., go test ./policy_test/ -rapid.checks=10000.
// A failing schedule that rapid shrinks is kept as a named regression test
// beside its suite.
package policytest
