package telemetry

// Guard is a shared guard (breaker, bulkhead, rate limiter) as a
// [Registry] and an exporter see it: something that can report its live
// state in the one shape all guards share. Each guard also has a typed
// Stats method with the same numbers in its own types.
type Guard interface {
	// Snapshot returns the guard's state now, taken under the guard's
	// own rules: consistent, never torn between two states. It must be
	// safe to call at any time from any goroutine, and cheap enough to
	// call every second for thousands of guards.
	Snapshot() Snapshot
}

// Snapshot is the live state of one guard in the shape every guard
// shares. Kind says which of the per-kind parts applies; the others are
// zero.
type Snapshot struct {
	Kind Kind   // Breaker, Bulkhead or RateLimit
	Name string // the guard's name (its Config.Name)
	// Refused is the number of calls the guard has refused since it was
	// made (for a breaker: ErrOpen and ErrTooManyTrials; for a bulkhead:
	// full or queue timeout; for a rate limiter: limited). It only grows.
	Refused uint64

	Breaker  BreakerStats  // when Kind is Breaker
	Bulkhead BulkheadStats // when Kind is Bulkhead
	Limiter  LimiterStats  // when Kind is RateLimit
}

// BreakerStats is the part of a [Snapshot] that a breaker fills in.
type BreakerStats struct {
	// State is StateClosed, StateOpen or StateHalfOpen.
	State string
	// Forced is true while the breaker is held open or closed by hand
	// (ForceOpen, ForceClosed).
	Forced bool
	// Generation counts the breaker's changes: 1 when it is made, one
	// more for each transition and each ForceOpen, ForceClosed or Reset.
	Generation uint64
	// The counts of the current state, as breaker.Counts has them: over
	// the sliding window while closed (when one is configured), since the
	// state began otherwise. Rejected is the refusals of this state.
	Calls, Successes, Failures, Slow uint64
	FailureRatio                     float64
	ConsecutiveSuccesses             uint64
	ConsecutiveFailures              uint64
	Rejected                         uint64
}

// BulkheadStats is the part of a [Snapshot] that a bulkhead fills in.
type BulkheadStats struct {
	Limit    int // the most calls in flight at once
	InFlight int // calls holding a slot now
	Queued   int // calls waiting for a slot now
}

// LimiterStats is the part of a [Snapshot] that a rate limiter fills in.
type LimiterStats struct {
	Rate   float64 // tokens per second
	Burst  int     // the most tokens the bucket holds
	Tokens float64 // tokens in the bucket now (negative: owed to waiters)
}
