package breaker

import "github.com/f0b5b96b/resilience/telemetry"

// Kind is the kind of a breaker's snapshots and events.
const Kind telemetry.Kind = "breaker"

// The events of the breaker, reported to its observer ([WithObserver]).
// Every event carries the breaker's Name, and the events of a [Keyed]'s
// breakers their Key; the other fields are zero unless listed. Their
// string values are stable: a dashboard or an alert may key on them.
const (
	// EventOpened: the breaker opened (tripped, a half-open trial failed,
	// was slow or expired, or ForceOpen). From, To ("open"), Wait (the
	// cooldown; time.Duration(math.MaxInt64), "never", when forced).
	EventOpened telemetry.Type = "breaker.opened"
	// EventHalfOpened: the cooldown ended; the breaker admits trials.
	// From, To ("half-open").
	EventHalfOpened telemetry.Type = "breaker.half_opened"
	// EventClosed: the breaker closed (trials succeeded, ForceClosed or
	// Reset). From, To ("closed").
	EventClosed telemetry.Type = "breaker.closed"
	// EventRefused: the breaker refused a call (open, forced open, too
	// many trials). Err (the *resilience.RefusedError), Wait (its
	// Retry-After hint).
	EventRefused telemetry.Type = "breaker.refused"
	// EventFailure: the breaker counted a failure (closed, or a half-open
	// trial). Err (nil from Report and Record).
	EventFailure telemetry.Type = "breaker.failure"
	// EventIgnored: the breaker ignored an outcome (the classifier said
	// so, or the caller's context was canceled). Err.
	EventIgnored telemetry.Type = "breaker.ignored"
	// EventEvicted: a [Keyed] forgot the breaker of a key while it was
	// open, half-open or forced, to make room for a new key. Key, From
	// (its state: "open", "half-open", or "closed" when forced closed).
	// Closed breakers are forgotten first, and silently.
	EventEvicted telemetry.Type = "breaker.evicted"
)
