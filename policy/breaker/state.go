package breaker

import (
	"strconv"
	"time"
)

// State is the state of a [Breaker]. The zero State is [Closed].
type State uint8

const (
	// Closed admits every call and counts its outcome; a trip rule that
	// holds opens the breaker.
	Closed State = iota
	// Open refuses every call with [ErrOpen] until the cooldown has passed;
	// then the breaker is half-open.
	Open
	// HalfOpen admits up to MaxTrials concurrent trial calls and refuses the
	// others with [ErrTooManyTrials]. SuccessThreshold successful trials
	// in a row close the breaker; a trial that fails, is slow (when
	// SlowCall is set) or expires (see Config.TrialTimeout) opens it again.
	HalfOpen
)

// String returns "closed", "open" or "half-open", or "State(n)" for an
// unknown value n.
func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Transition describes one change of a breaker's state, as passed to the
// Config.OnStateChange callback.
type Transition struct {
	Name string // the breaker's name
	// Key is the key of a [Keyed]'s breaker, as a string (the key itself
	// for string keys, else fmt.Sprint of it); "" for a breaker from New.
	Key      string
	From, To State // never equal
	// Generation is the generation of the new state. Every transition
	// (and every forced change or reset, even one that keeps the state)
	// starts a new generation; permits of older generations report nothing.
	Generation uint64
	// At is when the transition took effect by the breaker's clock. A
	// transition that is due to time passing (an open breaker whose
	// cooldown ends, a half-open trial that expires) takes effect at the
	// instant it became due, even if the breaker noticed it later.
	At time.Time
	// Counts are the counts of the state that was left, as they were when
	// it was left: for a trip, the counts that made it trip.
	Counts Counts
}

// Counts is a snapshot of a breaker's counters. Counts start from zero at
// every transition (every generation).
//
// Calls, Successes, Failures, Slow and FailureRatio are over the sliding
// window while the breaker is closed and a window is configured (the
// window the ratio rules see), and since the state began otherwise. The
// consecutive counts and Refused are since the state began: they do not
// decay with time. Outcomes the classifier ignores appear nowhere.
type Counts struct {
	Calls                uint64  // Successes + Failures
	Successes            uint64  // calls that succeeded
	Failures             uint64  // calls that failed
	Slow                 uint64  // calls slower than SlowCall, successful or not
	FailureRatio         float64 // Failures / Calls, in [0, 1]; 0 when Calls is 0
	ConsecutiveSuccesses uint64  // successes since the last failure
	ConsecutiveFailures  uint64  // failures since the last success; saturates at 2³²-1
	Refused              uint64  // calls refused (ErrOpen, ErrTooManyTrials)
}
