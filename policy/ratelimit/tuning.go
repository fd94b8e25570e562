package ratelimit

import (
	"math"
	"math/bits"
	"strings"

	"github.com/f0b5b96b/resilience"
)

// SetRate sets the rate at which the bucket refills, in events per second,
// from now on: the tokens in the bucket now stay (counted at the old rate
// up to this instant), and refill at the new rate from here, as with
// golang.org/x/time/rate's SetLimit. The bound of the package
// documentation then holds for the new rate from this instant: in any
// interval of length w after it, the events admitted after it are at most
// Burst + rate·w. The rate takes the values New's does: more than 0 and up
// to 1e9, +Inf (admit every event), or resilience.Off (no refill); a
// change from +Inf starts from a full bucket.
//
// Waits in progress ([Limiter.Wait]) and [Reservation]s made before the
// change keep the times they were given; their tokens are carried over as
// a debt of the new bucket (so later callers wait behind them at the new
// rate), and a Reservation made before it can no longer give its tokens
// back with Cancel.
//
// SetRate is safe to call at any time, from any goroutine. It takes a
// short lock that only other changes of this limiter wait on; a call of
// Allow at that instant waits for it to finish, the others do not notice.
// It allocates. It panics, naming the value, if rate is 0 (use
// resilience.Off for no refill), NaN, negative other than Off, or above
// 1e9 other than +Inf, or if rate is finite and
// the burst is 0 (a limiter made with +Inf and burst 0: set the burst
// first).
func (l *Limiter) SetRate(rate float64) {
	noZeroRate(rate)
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.cur.Load()
	cfg := b.p.cfg
	cfg.Rate = rate
	l.replace(b, retune(b.p, cfg, "SetRate"), b.p.elapsed())
}

// SetBurst sets the bucket's capacity, in events, from now on. The tokens
// in the bucket now stay, up to the new burst: lowering the burst below
// them drops those above it, raising it adds none (the bucket then fills
// up to the new burst at the rate), as with golang.org/x/time/rate's
// SetBurst. The bound of the package documentation then holds for the new
// burst from this instant. Waits in progress and Reservations are treated
// as by [Limiter.SetRate], and so is concurrency.
//
// SetBurst panics, naming the value, if burst is negative, above 1<<52, or
// 0 with a finite rate.
func (l *Limiter) SetBurst(burst int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.cur.Load()
	cfg := b.p.cfg
	cfg.Burst = burst
	l.replace(b, retune(b.p, cfg, "SetBurst"), b.p.elapsed())
}

// Rate returns the rate at which the bucket refills, in events per second:
// the one given to New or SetRate, with 0 for no refill (Off), and +Inf
// for no limit.
func (l *Limiter) Rate() float64 {
	if r := l.cur.Load().p.cfg.Rate; r != resilience.Off {
		return r
	}
	return 0
}

// Burst returns the bucket's capacity, in events: the one given to New or
// SetBurst.
func (l *Limiter) Burst() int { return int(l.cur.Load().p.burst) }

// Tokens returns the number of tokens in the bucket now: between 0 and
// Burst, or below 0 while waits and reservations have taken tokens ahead
// (each waiting caller's tokens count until it is due), with a fraction
// when a token is partly refilled. AllowN(n) passes now when n <= Tokens()
// (up to the rounding of Precision in the package documentation). With
// Rate +Inf it is +Inf. It is meant for metrics and decisions that may be
// stale: another goroutine may take tokens at once. It allocates nothing
// and takes no lock.
func (l *Limiter) Tokens() float64 {
	for {
		b := l.cur.Load()
		p := b.p
		if p.inf {
			return math.Inf(1)
		}
		lo := p.units(p.elapsed())
		if tat := b.tat.Load(); tat != sealed {
			return float64(p.tau-(max(tat, lo)-lo)) / float64(p.inc)
		}
		l.awaitChange()
	}
}

// noZeroRate panics if rate is 0, which SetRate does not take: it would
// silently mean "no refill", which is resilience.Off.
func noZeroRate(rate float64) {
	if rate == 0 {
		panic("ratelimit: SetRate(0): the rate must be > 0 events per second, +Inf for no limit, or resilience.Off for no refill")
	}
}

// retune returns params for cfg on p's origin and clock, or panics with
// Validate's message, put as method's.
func retune(p *params, cfg Config, method string) *params {
	if err := cfg.validate(true); err != nil {
		panic("ratelimit: " + method + ": " + strings.TrimPrefix(err.Error(), "ratelimit: "))
	}
	return p.retuned(cfg)
}

// replace replaces l's bucket b, read under l.mu, by one under q that holds
// the same tokens at ns (since the origin), capped at q's burst. l.mu must
// be held.
func (l *Limiter) replace(b *bucket, q *params, ns int64) {
	var tat int64
	for {
		tat = b.tat.Load()
		if b.tat.CompareAndSwap(tat, sealed) {
			break
		}
	}
	nb := new(bucket)
	nb.setParams(q)
	nb.tat.Store(convert(b.p, q, tat, ns))
	l.cur.Store(nb)
}

// convert returns the TAT under q that holds the tokens that TAT tat holds
// under p at ns since the origin, capped at q's burst. The tokens are
// rounded down to a unit (never more than the exact count), and the TAT is
// placed from ns in q's units rounded down, the same reading a decision at
// ns makes: so a whole count of tokens stays whole (4 tokens under 20/s
// are 4 under 21/s, not 3.99... read as 3). Read later, the bucket may hold
// up to one unit (1/inc of a token) more than the exact count, as the
// rounding of two readings of the clock allows. A bucket under +Inf counts
// as full.
func convert(p, q *params, tat, ns int64) int64 {
	if q.inf {
		return 0
	}
	lo, _ := q.unitsRange(ns)
	if p.inf {
		return lo // full
	}
	// credit: the tokens times p.inc, below 0 when tokens were taken ahead.
	plo := p.units(ns)
	credit := p.tau - (max(tat, plo) - plo)
	// The same tokens times q.inc, rounded down: credit·q.inc/p.inc.
	c, fits := mulDivFloor(credit, q.inc, p.inc)
	if !fits && credit > 0 || fits && c >= q.tau {
		return lo // full (or more than full: capped)
	}
	// The deficit q.tau - c, from hi, so that the deficit tested later is
	// never below the exact one. A deficit that outlasts the limiter's
	// time (see maxElapsed) is clamped there, so that the TAT stays in
	// range: either way no token comes back before time stops.
	if q.k == 0 {
		// No refill: time does not pass in q's units (hi is 0), and a
		// debt stays a debt, carried on to a later change of rate. One
		// beyond 2^61 units is clamped there: it would never be repaid.
		if !fits || c < -maxTau {
			return q.tau + maxTau
		}
		return q.tau - c
	}
	end := q.units(maxElapsed) + q.tau
	if !fits || c < q.tau-(end-lo) {
		return end
	}
	return lo + q.tau - c
}

// mulDivFloor returns floor(x·m/d) for m >= 0 and d > 0, and whether it
// fits an int64.
func mulDivFloor(x, m, d int64) (int64, bool) {
	neg := x < 0
	a := uint64(x)
	if neg {
		a = -a
	}
	h, l := bits.Mul64(a, uint64(m))
	if h >= uint64(d) {
		return 0, false
	}
	q, r := bits.Div64(h, l, uint64(d))
	if neg {
		if r != 0 {
			q++
		}
		if q > 1<<63 {
			return 0, false
		}
		return int64(-q), true
	}
	if q > math.MaxInt64 {
		return 0, false
	}
	return int64(q), true
}
