package ratelimit

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Limiter is a token bucket shared by every call to one dependency: it
// refills at Rate events per second up to Burst, and each admitted event
// takes a token. [Limiter.Allow] and [Limiter.AllowN] decide at once;
// [Limiter.Wait] and [Limiter.WaitN] wait for the tokens when the wait fits
// the caller's deadline and [Config.MaxWait]; [Limiter.Reserve] takes
// tokens ahead and says when to act. [Limiter.SetRate] and
// [Limiter.SetBurst] change the bucket while it runs, [Limiter.Tokens]
// reads it.
//
// The bucket is one atomic number (GCRA, see the package documentation):
// Allow is lock-free — a clock reading and a compare-and-swap — and
// allocates nothing; when 1/Rate is a whole number of nanoseconds (as with
// Every(d), or a Rate dividing 1e9) it also skips the conversion of the
// reading to the bucket's units. When 1/Rate is not a whole number of nanoseconds, or
// the burst is huge for the rate, time is rounded against the caller: an
// event may pass a little later than in an exact bucket, never earlier (see
// Precision in the package documentation for the bounds). For one, the
// last token of a full bucket, taken one call at a time all within one
// nanosecond (only a fake clock stands that still), may pass up to 2ns
// later; AllowN(Burst) takes the whole burst at once. A Limiter is safe for
// simultaneous use by multiple goroutines. Create one with [New]; the zero
// Limiter is not usable.
type Limiter struct {
	cur    atomic.Pointer[bucket] // the bucket now; never nil
	origin time.Time              // every params' origin; Allow reads it here
	mu     sync.Mutex             // serializes changes; held while cur is sealed
	b0     bucket                 // the first bucket

	// rejected counts the refusals since New; only refusals write it.
	rejected atomic.Uint64
}

// bucket is the GCRA state under one set of params: the theoretical
// arrival time in p's units since p.origin. A change of rate or burst
// replaces a Limiter's bucket: it seals the old one (its tat becomes
// sealed, for ever, so that nobody changes it after it was read for the
// new one), then publishes a new one whose tat holds the same tokens.
type bucket struct {
	tat atomic.Int64
	p   *params
	// p's fastNS, inc and tau, in the bucket itself: Allow's shortest
	// path reads them without the load of p.
	fastNS   bool
	inc, tau int64
}

// setParams sets b's params; b must not be in use yet.
func (b *bucket) setParams(p *params) {
	b.p, b.fastNS, b.inc, b.tau = p, p.fastNS, p.inc, p.tau
}

// sealed is the tat of a bucket that has been replaced. A live tat is
// never negative: it starts at 0 or at a converted TAT, each step adds at
// least the units it takes, and each step's units are given back at most
// once.
const sealed = math.MinInt64

// admitted, refused and replaced are the outcomes of one GCRA step.
const (
	admitted = iota
	refused
	replaced // the bucket was sealed: read the Limiter's bucket again
	lost     // (admitAt) the TAT changed since it was read: step again
)

// New returns a token bucket that refills at rate events per second (see
// [Every] for one event per duration) and holds at most burst events; it
// starts full. A rate of +Inf admits every event (burst may then be 0);
// resilience.Off switches the refill off: the bucket admits burst events
// in all (golang.org/x/time/rate's NewLimiter(0, burst)). Options apply in
// order; a [Config] given with [WithConfig] replaces rate and burst only
// where its fields are set.
//
// New panics if rate is 0 and no Config replaces it ("ratelimit: New(0,
// 5): the rate must be > 0 events per second, +Inf for no limit, or
// resilience.Off for no refill": a 0 would silently mean "no refill"), if
// an option is nil, or if the configuration it builds is invalid (see
// [Config.Validate]): a NaN rate or a negative one other than Off, a rate
// above 1e9 other than +Inf, or burst < 1 with a finite rate, with a
// message naming the field and the value, e.g.
// "ratelimit: Burst must be >= 1 with a finite Rate, got 0".
func New(rate float64, burst int, opts ...Option) *Limiter {
	l := &Limiter{}
	l.init(newParams(build("New", rate, burst, opts)))
	return l
}

func (l *Limiter) init(p *params) {
	l.origin = p.origin
	l.b0.setParams(p)
	l.cur.Store(&l.b0)
}

// awaitChange waits for the change of rate or burst that sealed the bucket
// just read to finish: the change holds l.mu until the new bucket is
// published.
func (l *Limiter) awaitChange() {
	l.mu.Lock()
	//lint:ignore SA2001 an empty critical section: waiting for the change to finish is the point
	l.mu.Unlock()
}

// Allow reports whether one event may happen now, and takes its token if
// so. It never waits.
func (l *Limiter) Allow() bool {
	if b := l.cur.Load(); b.fastNS {
		// The real clock, and a unit is a nanosecond (1/Rate a whole
		// number of nanoseconds): the units are the reading itself, with
		// no clamps and no multiply between the clock read and the
		// compare-and-swap that waits on it, and the bucket holds what
		// the step needs, one load from the Limiter. A reading that
		// needs clamping (a monotonic one is never negative; maxElapsed
		// is 73 years), a sealed bucket or a lost compare-and-swap takes
		// the general step.
		e := int64(time.Since(l.origin))
		if uint64(e) < maxElapsed {
			switch b.admitAt(b.tat.Load(), e, b.inc, b.tau) {
			case admitted:
				return true
			case refused:
				l.refuse(b.p, ErrLimited, 0)
				return false
			}
		}
	}
	return l.allow()
}

// allow is Allow's general step.
func (l *Limiter) allow() bool {
	for {
		b := l.cur.Load()
		p := b.p
		if p.inf {
			return true
		}
		lo, hi := p.now()
		if _, _, r := b.admit(lo, hi, p.inc, 0); r != replaced {
			if r == admitted {
				return true
			}
			l.refuse(p, ErrLimited, 0)
			return false
		}
		l.awaitChange()
	}
}

// AllowN reports whether n events may happen now, and takes their n tokens
// if so (all or none). It never waits. AllowN(0) is true; an n above the
// burst is never allowed unless the rate is +Inf. AllowN panics if n < 0.
func (l *Limiter) AllowN(n int) bool {
	for {
		b := l.cur.Load()
		p := b.p
		if n <= 0 || p.inf {
			if n < 0 {
				panic(fmt.Sprintf("ratelimit: n must be >= 0, got %d", n))
			}
			return true
		}
		if int64(n) > p.burst {
			return false
		}
		lo, hi := p.now()
		if _, _, r := b.admit(lo, hi, int64(n)*p.inc, 0); r != replaced {
			if r == admitted {
				return true
			}
			l.refuse(p, ErrLimited, 0)
			return false
		}
		l.awaitChange()
	}
}

// take takes n tokens if they are there now or within limit. It returns
// the bucket that decided, the wait in units (<= 0 when the tokens are
// there now; b.p.waitFor(at, wait) is the wait as a duration), the TAT it
// set, the time it read (ns since the origin), and whether it took them.
// (Several results, not a struct: a struct of them was copied through
// memory on every call, a third of the cost of a Wait that does not wait.)
func (l *Limiter) take(n int, limit time.Duration) (b *bucket, wait, tat, at int64, ok bool) {
	for {
		b = l.cur.Load()
		p := b.p
		if n <= 0 || p.inf {
			if n < 0 {
				panic(fmt.Sprintf("ratelimit: n must be >= 0, got %d", n))
			}
			return b, 0, 0, 0, true
		}
		if int64(n) > p.burst {
			return b, math.MaxInt64, 0, 0, false
		}
		at = p.elapsed()
		lo, hi := p.unitsRange(at)
		var maxWait int64 // units that pass within limit from now
		if limit > 0 {
			// at + limit, saturating at maxElapsed: limit may be as large
			// as math.MaxInt64 (a MaxWait meaning "no cap", a far
			// deadline).
			end := int64(maxElapsed)
			if int64(limit) < end-at {
				end = at + int64(limit)
			}
			maxWait = p.units(end) - lo
		}
		var r int
		wait, tat, r = b.admit(lo, hi, int64(n)*p.inc, maxWait)
		if r != replaced {
			return b, wait, tat, at, r == admitted
		}
		l.awaitChange()
	}
}

// admit is one GCRA step at a time between lo and hi units (see gcra.go):
// it takes need units of tokens if their wait, in units, is at most
// maxWait. It returns the wait (<= 0 when the tokens are there now), the
// TAT it set, and the outcome.
func (b *bucket) admit(lo, hi, need, maxWait int64) (wait, tat int64, outcome int) {
	for {
		old := b.tat.Load()
		if old == sealed {
			return 0, 0, replaced
		}
		tat = max(old, hi) + need
		wait = max(old, lo) + need - lo - b.p.tau
		if wait > maxWait {
			return wait, 0, refused
		}
		if b.tat.CompareAndSwap(old, tat) {
			return wait, tat, admitted
		}
	}
}

// admitAt is admit's step for one event of inc units at e units, where lo
// and hi are both e (a unit is a nanosecond), on the TAT old: the
// compare-and-swap lands only if the TAT is still old. tau is b.tau. It
// returns admitted, refused, replaced, or lost when the TAT has changed
// since it was read.
func (b *bucket) admitAt(old, e, inc, tau int64) int {
	if old == sealed {
		return replaced
	}
	tat := max(old, e) + inc
	if tat-e > tau {
		return refused
	}
	if b.tat.CompareAndSwap(old, tat) {
		return admitted
	}
	return lost
}

// giveBack gives back the need units of tokens taken by the step that set
// the TAT to tat, at ns since the origin, as far as later steps allow
// (golang.org/x/time/rate's rule): the tokens that steps taken since then
// reserved behind it — whose time to act is later than its own — stay
// spent, since those steps' times were reckoned with these tokens gone.
// The step acted at the later of tat - tau and its own time, so a later
// step's TAT counts only beyond tau after that: steps that took tokens
// that were there at the same instant reserved nothing behind a step that
// did not wait. Nothing is given back once the bucket has been replaced.
func (b *bucket) giveBack(tat, need, ns int64) {
	floor := max(tat, b.p.units(ns)+b.p.tau) // the TAT of a step acting when this one did
	for {
		cur := b.tat.Load()
		if cur == sealed {
			return
		}
		back := need - max(cur-floor, 0) // units reserved behind it stay spent
		if back <= 0 || b.tat.CompareAndSwap(cur, cur-back) {
			return
		}
	}
}

// Wait waits for one event's token and takes it; see [Limiter.WaitN].
func (l *Limiter) Wait(ctx context.Context) error { return l.WaitN(ctx, 1) }

// WaitN takes n tokens, waiting until they are there. It returns nil once
// they are taken, and otherwise, without taking any:
//   - a *resilience.RefusedError matching [ErrLimited] at once, without waiting,
//     when the wait would end after ctx's deadline or last longer than
//     [Config.MaxWait] (or, with no refill, never end); its RetryAfter() is
//     that wait;
//   - an error matching [ErrExceedsBurst] at once if n exceeds the burst:
//     no wait would help;
//   - ctx.Err() at once if ctx is done, or as soon as ctx ends during the
//     wait. The tokens are then given back as [Reservation.Cancel] gives
//     them back: all of them, less those that callers who came later have
//     reserved behind them.
//
// The wait is reckoned when WaitN is called: a [Limiter.SetRate] or
// [Limiter.SetBurst] during it changes neither its end nor its tokens.
// The deadline is compared with the limiter's clock. WaitN(ctx, 0) returns
// ctx.Err(). WaitN panics if n < 0.
func (l *Limiter) WaitN(ctx context.Context, n int) error {
	if n < 0 {
		panic(fmt.Sprintf("ratelimit: n must be >= 0, got %d", n))
	}
	p := l.cur.Load().p
	if err := ctx.Err(); err != nil || n == 0 || p.inf {
		return err
	}
	if int64(n) > p.burst {
		return fmt.Errorf("%w%s: %d asked, burst %d", ErrExceedsBurst, p.nameSuffix(), n, p.burst)
	}
	limit := maxElapsed * time.Nanosecond
	if p.cfg.MaxWait > 0 {
		limit = p.cfg.MaxWait
	}
	if d, ok := ctx.Deadline(); ok {
		limit = max(min(limit, d.Sub(p.clk.Now())), 0)
	}
	b, wait, tat, at, ok := l.take(n, limit)
	if !ok {
		if wait == math.MaxInt64 { // the burst changed under us
			return fmt.Errorf("%w%s: %d asked, burst %d", ErrExceedsBurst, p.nameSuffix(), n, b.p.burst)
		}
		hint := b.p.waitFor(at, wait)
		return l.refuse(b.p, resilience.Refuse(ErrLimited, p.cfg.Name, hint), hint)
	}
	if wait <= 0 {
		return nil
	}
	d := b.p.waitFor(at, wait)
	if err := p.clk.Sleep(ctx, d); err != nil {
		b.giveBack(tat, int64(n)*b.p.inc, at)
		return err
	}
	if o := b.p.cfg.Observer; o != nil {
		o.Observe(telemetry.Event{Type: EventWaited, Name: b.p.cfg.Name, Wait: d})
	}
	return nil
}

// refuse counts a refusal, reports it to p's observer (the limiter holds
// no lock here) and returns err. hint is its Retry-After; 0 where the
// caller is given none (Allow, AllowN).
func (l *Limiter) refuse(p *params, err error, hint time.Duration) error {
	l.rejected.Add(1)
	if o := p.cfg.Observer; o != nil {
		o.Observe(telemetry.Event{Type: EventRefused, Name: p.cfg.Name, Err: err, Wait: hint})
	}
	return err
}
