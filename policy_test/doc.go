// Package policytest holds the black-box, model-based property suites of the
// library, run with pgregory.net/rapid under `go test`. It has no API; each
// suite is a _test.go file:
//
//   - compose_test.go: the composition laws of resilience.Policy (identity,
//     associativity, fallback called iff error, panic propagation) over random
//     chains and ops, against a reference model of nested calls.
//   - breaker_test.go: policy/breaker as a rapid state machine against a
//     reference model, over random configurations and schedules (admit,
//     report in any order and twice, stale reports, Record, clock steps that
//     land on the cooldown's end, a trial's expiry and bucket boundaries,
//     manual control, calls through the Policy adapter, panics);
//     breaker_stress_test.go: the same breaker from many goroutines (trial
//     bound, no lost permits, counts that add up, ordered callbacks).
//
// Run more cases with, e.g., go test ./policy_test/ -rapid.checks=10000.
// A failing schedule that rapid shrinks is kept as a named regression test
// beside its suite.
package policytest
