package breaker

import (
	"time"

	"github.com/f0b5b96b/resilience/internal/refusal"
)

// The breaker's refusals are *resilience.RefusedError values whose Reason
// is one of these sentinels; errors.Is matches them, and
// resilience.ErrRefused, through the refusal. Its Name is the breaker's
// name, and its RetryAfter is rounded up to a whole millisecond:
//
//   - [ErrOpen]: the time that was left in the cooldown when the call was
//     refused (by then the breaker admits a trial); on the real clock,
//     when the refusal it shares was made, up to 1/64 of the time left
//     (at least a millisecond) before, so the hint may be that much
//     longer, never shorter;
//   - [ErrTooManyTrials]: the time until the first outstanding trial
//     expires (see Config.TrialTimeout): by then that trial has either
//     reported, freeing its slot, or expired, opening the breaker again;
//   - [ErrForcedOpen]: resilience.Never: no cooldown ends a forced
//     opening, so a retry policy should stop at once rather than wait
//     (this library's retry policy does).
//
// Refusals may share one error value (refusing a call then allocates
// nothing).
var (
	// ErrOpen is matched by the refusal of a call that an open breaker
	// refused, forced open or not.
	ErrOpen error = refusal.New("breaker: open", nil)
	// ErrForcedOpen is matched by the refusal of a call that a breaker
	// forced open ([Breaker.ForceOpen]) refused. It also matches [ErrOpen].
	ErrForcedOpen error = refusal.New("breaker: forced open", ErrOpen)
	// ErrTooManyTrials is matched by the refusal of a call that a half-open
	// breaker refused because MaxTrials trial calls were already in flight.
	ErrTooManyTrials error = refusal.New("breaker: too many trials", nil)
)

// ceilMillis rounds d > 0 up to a whole millisecond.
func ceilMillis(d time.Duration) time.Duration {
	if r := d % time.Millisecond; r != 0 && d <= time.Duration(1<<63-1)-time.Millisecond {
		d += time.Millisecond - r
	}
	return d
}
