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
