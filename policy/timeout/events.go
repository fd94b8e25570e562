package timeout

import "github.com/f0b5b96b/resilience/telemetry"

// Kind is the kind of the timeout policy's events.
const Kind telemetry.Kind = "timeout"

// The events of the timeout policy, reported to its observer
// ([WithObserver]). Every event carries the policy's Name; the other
// fields are zero unless listed. Their string values are stable: a
// dashboard or an alert may key on them.
const (
	// EventExpired: a call returned [ErrTimeout]: its deadline passed.
	// Elapsed (the timeout).
	EventExpired telemetry.Type = "timeout.expired"
	// EventAbandoned: the policy returned without waiting for an op that
	// had not returned by its deadline (at the deadline, after
	// EventExpired, or at the caller's cancellation). Elapsed (the
	// timeout).
	EventAbandoned telemetry.Type = "timeout.abandoned"
)
