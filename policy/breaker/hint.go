package breaker

import "time"

// On the real clock, an open breaker refuses without reading the clock:
// its last refusal (lastRefusal, with the time left in the cooldown as
// its RetryAfter) is shared by the refusals that follow while it is fresh.
// A refusal that finds it stale takes the lock, reads the clock (which may
// end the cooldown), makes the refusal afresh and freshens it for up to
// hintLife, or until the cooldown ends if that is sooner, with a timer
// that makes it stale again. So refusals read the clock about once a
// millisecond, not once each; a shared hint is at most about hintLife
// (plus the timer's latency) longer than the time left, never shorter;
// and the cooldown's end is noticed by the first call after that timer
// fires. Other clocks (a clock.Fake in tests) are read by every refusal,
// which keeps their hints exact.
const hintLife = time.Millisecond

// Values of Breaker.hint.
const (
	hintStale = iota
	hintFresh
)

// freshenLocked marks lastRefusal, just made by an open breaker whose
// cooldown has left ns to run, fresh, and arms the timer that makes it
// stale: every store of hintFresh is followed by an arming, so the hint
// never stays fresh for longer than that.
func (b *Breaker) freshenLocked(left int64) {
	d := min(time.Duration(left), hintLife)
	b.hint.Store(hintFresh)
	if b.hintTimer == nil {
		b.hintTimer = time.AfterFunc(d, b.staleHint)
		return
	}
	b.hintTimer.Reset(d)
}

// staleHint is the hint timer's function.
func (b *Breaker) staleHint() { b.hint.Store(hintStale) }
