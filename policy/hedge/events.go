package hedge

import "github.com/f0b5b96b/resilience/telemetry"

// Kind is the kind of the hedge policy's events.
const Kind telemetry.Kind = "hedge"

// The events of the hedge policy, reported to its observer
// ([WithObserver]). Every event carries the policy's Name; the other
// fields are zero unless listed. Their string values are stable: a
// dashboard or an alert may key on them.
const (
	// EventLaunched: a hedged copy of the call started. Attempt (2 for
	// the first hedge), Elapsed (since the first copy started).
	EventLaunched telemetry.Type = "hedge.launched"
	// EventWon: a copy's result was used, in a call that hedged. Attempt
	// (that copy, 1 for the first), Elapsed (since the first copy
	// started).
	EventWon telemetry.Type = "hedge.won"
	// EventLosersCancelled: the copies that lost were cancelled. Attempt
	// (how many).
	EventLosersCancelled telemetry.Type = "hedge.losers_cancelled"
)
