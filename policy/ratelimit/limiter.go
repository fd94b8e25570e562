package ratelimit

import (
	"context"
	"fmt"
	"github.com/f0b5b96b/resilience"
	"math"
	"sync/atomic"
	"time"
)

// Limiter is a token bucket shared by every call to one dependency: it
// refills at Rate events per second up to Burst, and each admitted event
// takes a token. [Limiter.Allow] and [Limiter.AllowN] decide at once;
// [Limiter.Wait] and [Limiter.WaitN] wait for the tokens when the wait fits
// the caller's deadline and [Config.MaxWait].
//
// The bucket is one atomic number (GCRA, see the package documentation):
// Allow is lock-free — a clock reading and a compare-and-swap — and
// allocates nothing. When 1/Rate is not a whole number of nanoseconds, or
// the burst is huge for the rate, time is rounded against the caller: an
// event may pass a little later than in an exact bucket, never earlier (see
// Precision in the package documentation for the bounds). For one, the
// last token of a full bucket, taken one call at a time all within one
// nanosecond (only a fake clock stands that still), may pass up to 2ns
// later; AllowN(Burst) takes the whole burst at once. A Limiter is safe for
// simultaneous use by multiple goroutines. Create one with [New]; the zero
// Limiter is not usable.
type Limiter struct {
	tat atomic.Int64 // theoretical arrival time, in units since p.origin
	p   *params
}

// New returns a token bucket that refills at rate events per second (see
// [Every] for one event per duration) and holds at most burst events; it
// starts full. A rate of +Inf admits every event (burst may then be 0); a
// rate of 0 or resilience.Off switches the refill off: the bucket admits
// burst events in all. Options apply in order; a [Config] given with
// [WithConfig] replaces rate and burst only where its fields are set.
//
// New panics if an option is nil or the configuration it builds is invalid
// (see [Config.Validate]): a NaN rate or a negative one other than Off, a
// rate above 1e9 other than +Inf, or burst < 1 with a finite rate, with a
// message naming the field and the value, e.g.
// "ratelimit: Burst must be >= 1 with a finite Rate, got 0".
func New(rate float64, burst int, opts ...Option) *Limiter {
	return &Limiter{p: newParams(build(rate, burst, opts))}
}

// Allow reports whether one event may happen now, and takes its token if
// so. It never waits.
func (l *Limiter) Allow() bool {
	p := l.p
	if p.inf {
		return true
	}
	lo, hi := p.now()
	_, _, ok := l.admit(lo, hi, p.inc, 0)
	return ok
}

// AllowN reports whether n events may happen now, and takes their n tokens
// if so (all or none). It never waits. AllowN(0) is true; an n above the
// burst is never allowed unless the rate is +Inf. AllowN panics if n < 0.
func (l *Limiter) AllowN(n int) bool {
	_, _, _, ok := l.take(n, 0)
	return ok
}

// take takes n tokens if they are there now or within limit. It returns
// the wait in units (<= 0 when they are there now; see params.waitFor),
// the TAT it set, the time it read (ns since the origin), and whether it
// took them.
func (l *Limiter) take(n int, limit time.Duration) (wait, tat, at int64, ok bool) {
	p := l.p
	if n <= 0 || p.inf {
		if n < 0 {
			panic(fmt.Sprintf("ratelimit: n must be >= 0, got %d", n))
		}
		return 0, 0, 0, true
	}
	if int64(n) > p.burst {
		return math.MaxInt64, 0, 0, false
	}
	at = p.elapsed()
	lo, hi := p.unitsRange(at)
	var maxWait int64 // units that pass within limit from now
	if limit > 0 {
		// at + limit, saturating at maxElapsed: limit may be as large as
		// math.MaxInt64 (a MaxWait meaning "no cap", a far deadline).
		end := int64(maxElapsed)
		if int64(limit) < end-at {
			end = at + int64(limit)
		}
		maxWait = p.units(end) - lo
	}
	wait, tat, ok = l.admit(lo, hi, int64(n)*p.inc, maxWait)
	return wait, tat, at, ok
}

// admit is one GCRA step at a time between lo and hi units (see gcra.go):
// it takes need units of tokens if their wait, in units, is at most
// maxWait. It returns the wait (<= 0 when the tokens are there now), the
// TAT it set, and whether it took them.
func (l *Limiter) admit(lo, hi, need, maxWait int64) (wait, tat int64, ok bool) {
	for {
		old := l.tat.Load()
		tat = max(old, hi) + need
		wait = max(old, lo) + need - lo - l.p.tau
		if wait > maxWait {
			return wait, 0, false
		}
		if l.tat.CompareAndSwap(old, tat) {
			return wait, tat, true
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
//     wait. The tokens are then given back, unless a later caller has
//     already reserved tokens behind them (then they stay spent).
//
// The deadline is compared with the limiter's clock. WaitN(ctx, 0) returns
// ctx.Err(). WaitN panics if n < 0.
func (l *Limiter) WaitN(ctx context.Context, n int) error {
	p := l.p
	if n < 0 {
		panic(fmt.Sprintf("ratelimit: n must be >= 0, got %d", n))
	}
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
	wait, tat, at, ok := l.take(n, limit)
	if !ok {
		return resilience.Refuse(ErrLimited, p.cfg.Name, p.waitFor(at, wait))
	}
	if wait <= 0 {
		return nil
	}
	if err := p.clk.Sleep(ctx, p.waitFor(at, wait)); err != nil {
		// Give the tokens back if nobody reserved behind them.
		l.tat.CompareAndSwap(tat, tat-int64(n)*p.inc)
		return err
	}
	return nil
}
