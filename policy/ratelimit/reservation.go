package ratelimit

import (
	"sync/atomic"
	"time"
)

// A Reservation is tokens taken ahead by [Limiter.Reserve] or
// [Limiter.ReserveN]: the holder acts after [Reservation.Delay], or gives
// the tokens back with [Reservation.Cancel] if it will not act. It mirrors
// golang.org/x/time/rate's Reservation, without the methods that take a
// time (DelayFrom, CancelAt): the limiter's own clock ([Config.Clock])
// gives the time, and a clock.Fake stands in for it in tests.
//
// A Reservation is safe for simultaneous use by multiple goroutines. Use
// it through the pointer it is returned as.
type Reservation struct {
	ok   bool
	b    *bucket // nil when nothing was taken: n = 0 or Rate +Inf
	tat  int64   // the TAT the reservation set, in b's units
	need int64   // units taken
	at   int64   // when the tokens were taken, ns since the origin
	act  int64   // when the holder may act, ns since the origin
	done atomic.Bool
}

// notOK is the Reservation of a request that can never be granted.
var notOK = &Reservation{}

// Reserve reserves one token; see [Limiter.ReserveN].
func (l *Limiter) Reserve() *Reservation { return l.ReserveN(1) }

// ReserveN takes n tokens now, whether or not they are there yet, and
// returns when they will have been, as x/time/rate's ReserveN does: the
// holder must wait [Reservation.Delay] before the n events happen, or
// give the tokens back with [Reservation.Cancel]. The tokens count at
// once: callers after it wait behind it. Unlike [Limiter.WaitN] it waits
// for nothing and is not bounded by [Config.MaxWait]: the holder decides
// what delay it accepts (see the example).
//
// The reservation is not OK, and takes nothing, if n exceeds the burst
// (with a finite rate), or if the tokens would never be there (no refill,
// or later than the limiter's clock runs). ReserveN(0), and any n with
// Rate +Inf, is OK with no delay. A change of rate or burst afterwards
// keeps the reservation's delay ([Limiter.SetRate]).
//
// ReserveN allocates the Reservation (except when it is not OK); the
// tokens are taken lock-free, as by AllowN. It panics if n < 0.
func (l *Limiter) ReserveN(n int) *Reservation {
	b, wait, tat, at, ok := l.take(n, maxElapsed*time.Nanosecond)
	switch {
	case !ok:
		return notOK
	case n == 0 || b.p.inf:
		return &Reservation{ok: true}
	}
	r := &Reservation{ok: true, b: b, tat: tat, need: int64(n) * b.p.inc, at: at, act: at}
	if wait > 0 {
		r.act += int64(b.p.waitFor(at, wait))
	}
	return r
}

// OK reports whether the limiter can grant the tokens asked for. A
// reservation that is not OK took nothing: Delay is resilience.Never and
// Cancel does nothing.
func (r *Reservation) OK() bool { return r.ok }

// Delay returns how long from now the holder must wait before acting: 0
// when it may act at once, resilience.Never when the reservation is not
// OK. It reads the limiter's clock.
func (r *Reservation) Delay() time.Duration {
	switch {
	case !r.ok:
		return never
	case r.b == nil:
		return 0
	}
	return time.Duration(max(r.act-r.b.p.elapsed(), 0))
}

// Cancel says the holder will not act: it gives the reservation's tokens
// back to the limiter, as golang.org/x/time/rate's Cancel does, "as much as
// possible, considering that other reservations may have already been
// made": the tokens that callers who came after it reserved behind it
// (due later than it) stay spent, since their times were reckoned with
// these tokens gone; tokens that callers took at the instant it was due,
// from what was there then, do not count against it. It gives nothing
// back once the time to act has passed (Delay had reached 0 before this
// instant), when the reservation is not OK, or after a change of the
// limiter's rate or burst. Only the first call does anything; it allocates
// nothing and takes no lock.
func (r *Reservation) Cancel() {
	if r.b == nil || !r.done.CompareAndSwap(false, true) {
		return
	}
	if r.b.p.elapsed() > r.act {
		return // acted
	}
	r.b.giveBack(r.tat, r.need, r.at)
}
