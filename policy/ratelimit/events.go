package ratelimit

import "github.com/f0b5b96b/resilience/telemetry"

// Kind is the kind of a rate limiter's snapshots and events.
const Kind telemetry.Kind = "ratelimit"

// The events of the rate limiter, reported to its observer
// ([WithObserver]). Every event carries the limiter's Name; the other
// fields are zero unless listed. A [Keyed]'s events leave Key empty
// (naming the key would allocate) and carry the Keyed's Name. Their
// string values are stable: a dashboard or an alert may key on them.
const (
	// EventRefused: the rate limiter refused a call (Allow, AllowN, Wait,
	// or a call through Policy or KeyedPolicy). Err, Wait (its
	// Retry-After; 0 from Allow and AllowN).
	EventRefused telemetry.Type = "ratelimit.refused"
	// EventWaited: a call waited for a token. Wait (the time waited).
	EventWaited telemetry.Type = "ratelimit.waited"
)
