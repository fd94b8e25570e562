package breaker

import "github.com/f0b5b96b/resilience/telemetry"

// Stats is a snapshot of a breaker's live state, from [Breaker.Stats]:
// its state and generation and the counts of that state, all of one
// moment, and the refusals of its whole life.
type Stats struct {
	// Key is the key of a [Keyed]'s breaker, as a string (see
	// Transition.Key); "" for a breaker from New.
	Key    string
	State  State // as [Breaker.State] reads it
	Forced bool  // held open or closed by ForceOpen or ForceClosed
	// Generation is 1 for a new breaker, plus one for each transition and
	// each ForceOpen, ForceClosed or Reset (see the package doc).
	Generation uint64
	// Counts are the counts of the current state (generation), as
	// [Breaker.Counts] returns them.
	Counts Counts
	// Refused is the number of calls the breaker has refused since it was
	// made (Counts.Rejected starts from zero at each generation). It only
	// grows.
	Refused uint64
}

// Stats returns a snapshot of the breaker now. It is consistent: State,
// Forced, Generation and Counts are read together under the breaker's
// lock, the one that every transition and every failure takes, so they
// belong to one generation and a transition never falls between them.
// Successes and refusals, which are counted without that lock, are in it
// or not whole; Refused is read after Counts, so it is never less than
// the Counts.Rejected it comes with. Like [Breaker.State] and
// [Breaker.Counts], Stats makes a transition that time has made due
// happen first (and delivers its callback and event).
//
// Stats allocates nothing; its cost is that of Counts: a lock and a read
// of the breaker's counter shards (one, or 17 to 129 for a breaker that
// has grown them under contention), cheap enough to poll every second for
// thousands of breakers.
func (b *Breaker) Stats() Stats {
	b.mu.Lock()
	now := b.now() // under the lock: transitions' times never go backwards
	b.advanceLocked(now)
	w := b.word.Load()
	s := Stats{
		Key:        b.key,
		State:      wordState(w),
		Forced:     wordForced(w),
		Generation: wordGen(w),
		Counts:     b.countsLocked(now),
		Refused:    b.refusalsLocked(), // after Counts: never below its Rejected
	}
	b.unlock()
	return s
}

// Snapshot returns [Breaker.Stats] in the shape all guards share, for a
// telemetry.Registry and exporters: Kind telemetry.Breaker, the breaker's
// Name, Refused, and the Breaker part.
func (b *Breaker) Snapshot() telemetry.Snapshot {
	s := b.Stats()
	c := s.Counts
	return telemetry.Snapshot{
		Kind:    telemetry.Breaker,
		Name:    b.cfg.name,
		Refused: s.Refused,
		Breaker: telemetry.BreakerStats{
			State:                s.State.String(),
			Forced:               s.Forced,
			Generation:           s.Generation,
			Calls:                c.Calls,
			Successes:            c.Successes,
			Failures:             c.Failures,
			Slow:                 c.Slow,
			FailureRatio:         c.FailureRatio,
			ConsecutiveSuccesses: c.ConsecutiveSuccesses,
			ConsecutiveFailures:  c.ConsecutiveFailures,
			Rejected:             c.Rejected,
		},
	}
}
