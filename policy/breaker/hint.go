package breaker

import "time"

// On the real clock, an open breaker refuses without reading the clock:
// its last refusal (lastRefusal, with the time left in the cooldown as
// its RetryAfter) is shared by the refusals that follow while it is fresh.
// A refusal that finds it stale takes the lock, reads the clock (which may
// end the cooldown), makes the refusal afresh and freshens it, with a
// timer that makes it stale again, for hintLife(left): 1/64 of the time
// left in the cooldown, at least a millisecond, and never past the
// cooldown's end. So a shared hint is at most about 1/64 of the time left
// (or a millisecond) longer than the time left, never shorter; the
// cooldown's end is noticed by the first call after that timer fires; and
// the timer fires rarely (about 64·ln(cooldown/64ms) times in a cooldown,
// most of them in its last tenth of a second, and only while calls are
// refused), not once for each refusal nor once a millisecond. Other clocks
// (a clock.Fake in tests) are read by every refusal, which keeps their
// hints exact.

// hintLife returns how long a refusal made with left ns of cooldown to run
// stays fresh.
func hintLife(left int64) time.Duration {
	return min(max(time.Duration(left)>>6, time.Millisecond), time.Duration(left))
}

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
	d := hintLife(left)
	b.hint.Store(hintFresh)
	if b.hintTimer == nil {
		b.hintTimer = time.AfterFunc(d, b.staleHint)
		return
	}
	b.hintTimer.Reset(d)
}

// staleHint is the hint timer's function.
func (b *Breaker) staleHint() { b.hint.Store(hintStale) }

// refuseFresh refuses a call that found state word w, if w is open (not
// forced) and the last refusal, of w's generation, is fresh: it counts the
// refusal and returns its error, reading no clock. Otherwise it returns
// nil, having done nothing. Only a breaker on the real clock has a fresh
// hint.
func (b *Breaker) refuseFresh(w uint64) error {
	if w&(stateMask|forcedBit) != uint64(Open) || b.hint.Load() != hintFresh {
		return nil
	}
	r := b.lastRefusal.Load()
	if r == nil || r.gen != wordGen(w) {
		return nil
	}
	// b.reject(gen, false), its common case written out: one call fewer.
	c := &b.shardFor().rej
	if x := c.Load(); x-w>>genShift<<32 >= countMask { // another generation's word, or full
		b.reject(wordGen(w), false)
	} else if !c.CompareAndSwap(x, x+1) {
		b.collided()
		b.reject(wordGen(w), false)
	}
	return b.refuse(r.err)
}
