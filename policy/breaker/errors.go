package breaker

import (
	"time"

	"github.com/f0b5b96b/resilience/internal/refusal"
)

var (
	// ErrOpen is matched, through errors.Is, by the error of a call that an
	// open breaker refused. It also matches resilience.ErrRefused.
	ErrOpen error = refusal.Sentinel("breaker: open")
	// ErrTooManyTrials is matched, through errors.Is, by the error of a call
	// that a half-open breaker refused because MaxTrials trial calls were
	// already in flight. It also matches resilience.ErrRefused.
	ErrTooManyTrials error = refusal.Sentinel("breaker: too many trials")
)

// RefusedError is the error of a call that a breaker refused. It matches
// [ErrOpen] or [ErrTooManyTrials] (and so resilience.ErrRefused) through
// errors.Is, and carries what the caller needs to act on it: the breaker's
// name and a Retry-After hint ([RefusedError.RetryAfter]), which for a
// breaker forced open is the largest Duration, meaning "never". Get one
// with errors.As:
//
//	var re *breaker.RefusedError
//	if errors.As(err, &re) { log.Printf("%s refused, retry after %v", re.Name, re.RetryAfter()) }
//
// Refusals may share one RefusedError value (refusing a call then
// allocates nothing): do not modify it.
type RefusedError struct {
	Name   string // the breaker's name
	reason error  // ErrOpen or ErrTooManyTrials
	wait   time.Duration
	forced bool
	gen    uint64 // the generation that refused (see Breaker.refusedErr)
}

// Error returns, for example, "breaker: open (payments), retry after 12s",
// "breaker: open (payments), forced" or "breaker: too many trials
// (payments), retry after 4.5s".
func (e *RefusedError) Error() string {
	msg := e.reason.Error()
	if e.Name != "" {
		msg += " (" + e.Name + ")"
	}
	switch {
	case e.forced:
		msg += ", forced"
	case e.wait > 0:
		msg += ", retry after " + e.wait.String()
	}
	return msg
}

// Unwrap returns [ErrOpen] or [ErrTooManyTrials].
func (e *RefusedError) Unwrap() error { return e.reason }

// RetryAfter returns how long the caller should wait before trying again,
// rounded up to a whole millisecond:
//
//   - [ErrOpen]: the time that was left in the cooldown when the call was
//     refused (how long the breaker stays open, at least);
//   - [ErrTooManyTrials]: the time until the first outstanding trial
//     expires (see Config.TrialTimeout): by then that trial has either
//     reported, freeing its slot, or expired, opening the breaker again;
//   - [ErrOpen] from a breaker forced open ([Breaker.ForceOpen]): the
//     largest Duration, time.Duration(math.MaxInt64), meaning "never": no
//     cooldown ends a forced opening, so a retry policy should stop at
//     once rather than wait (this library's retry policy does).
//
// resilience.RetryAfter finds this method through wrapping.
func (e *RefusedError) RetryAfter() time.Duration { return e.wait }

// ceilMillis rounds d > 0 up to a whole millisecond.
func ceilMillis(d time.Duration) time.Duration {
	if r := d % time.Millisecond; r != 0 && d <= time.Duration(1<<63-1)-time.Millisecond {
		d += time.Millisecond - r
	}
	return d
}
