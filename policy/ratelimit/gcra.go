package ratelimit

import (
	"math"
	"math/big"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience"

	"github.com/f0b5b96b/resilience/clock"
)

// The limiter is the Generic Cell Rate Algorithm (GCRA), virtual
// scheduling form, of the ATM Forum Traffic Management Specification 4.0
// (af-tm-0056.000, 1996; also ITU-T I.371): a token bucket kept as one
// number, the theoretical arrival time (TAT) — the time at which the bucket
// will be full again. An event of n tokens at time t is admitted if
//
//	max(TAT, t) + n·T - t <= Burst·T      (T: the emission interval, 1/Rate)
//
// and then TAT becomes max(TAT, t) + n·T. TAT - t is the bucket's deficit,
// Burst·T its capacity (tau, the tolerance), both in time.
//
// Time is counted in units of T/inc since the limiter's origin, with inc a
// whole number of units per event, so that every event adds exactly inc
// units and nothing accumulates rounding. When T is a whole number of
// nanoseconds (as with Every(d), or a Rate that divides 1e9) a unit is one
// nanosecond and the arithmetic is exact. Otherwise inc = ceil(T) makes a
// unit a little under a nanosecond; a clock reading of t ns is then
// t·inc/T units, in general not a whole number, bracketed by lo <= t·inc/T
// <= hi (fixed-point multiplies by the exact ratio inc/T rounded down and
// up; hi - lo <= 2). The step rounds against the caller:
//
//	TAT' = max(TAT, hi) + n·inc,  admitted if max(TAT, lo) + n·inc - lo <= tau
//
// TAT' is never behind the exact bucket's TAT (by induction), and the
// deficit tested is never below the exact one (a TAT at or below lo is a
// full bucket, exactly as in the exact bucket): every event admitted is one
// the exact bucket admits on the same history, so the bound "at most Burst
// + Rate·w events in any interval of length w" holds exactly for the
// configured Rate. The deficit tested exceeds the exact one by under 2
// units: an event that the exact bucket admits with less than 2 units
// worth of tokens to spare may be refused, and passes at most 2 units
// (2ns) later. (When Burst·ceil(T) exceeds 1<<61 ns, inc is lowered to
// floor(2^61/Burst) so that tau fits, and a unit, T/inc, grows above 1ns
// accordingly: an event may then pass up to 2 such units late. The
// package documentation states these bounds; TestLatenessBound pins them.)

const (
	maxTau     = 1 << 61 // units; tau never exceeds it
	maxElapsed = 1 << 61 // ns (73 years) since the origin; time stops there
	kShift     = 62      // fraction bits of k
	never      = resilience.Never
)

// params is what every bucket of one configuration shares; immutable. A
// change of rate or burst makes new params (see retuned) with the same
// origin and clock, so that times read under either agree.
type params struct {
	inf    bool   // Rate +Inf: admit everything
	inc    int64  // units per event
	tau    int64  // Burst·inc: the bucket's capacity in units
	burst  int64  // Config.Burst
	k      uint64 // units per nanosecond (inc/T), times 1<<kShift, rounded down; 0 when Rate is 0
	kUp    uint64 // 1 if k was rounded, else 0: k+kUp is inc/T rounded up
	ns     bool   // a unit is exactly one nanosecond (k is 1<<kShift, kUp 0): unitsRange(t) is t, t
	origin time.Time
	clk    clock.Clock   // never nil
	fast   bool          // clk is the real clock: read it with time.Since
	fastNS bool          // fast and ns: Allow's shortest path
	last   *atomic.Int64 // the latest time read from clk (not fast), ns since origin; shared by retuned params
	cfg    Config
	layer  string // the policy's layer name
}

func newParams(cfg Config) *params {
	p := &params{layer: "ratelimit", clk: cfg.Clock, last: new(atomic.Int64)}
	if cfg.Name != "" {
		p.layer += "(" + cfg.Name + ")"
	}
	if p.clk == nil {
		p.clk = clock.Real()
	}
	p.fast = p.clk == clock.Real()
	p.origin = p.clk.Now()
	p.tune(cfg)
	return p
}

// retuned returns params for cfg, whose Rate and Burst may differ from p's,
// on p's origin and clock.
func (p *params) retuned(cfg Config) *params {
	q := &params{origin: p.origin, clk: p.clk, fast: p.fast, last: p.last, layer: p.layer}
	q.tune(cfg)
	if q.k == 0 && !q.inf && !p.inf && p.inc > 1 {
		// No refill: keep p's units per token, so that the tokens carry
		// over with their fractions rather than rounded down to whole
		// ones (a bucket that does not refill has no interval to take
		// its units from).
		q.inc = min(p.inc, maxTau/q.burst)
		q.tau = q.inc * q.burst
	}
	return q
}

// tune sets the fields of p that follow from cfg's Rate and Burst.
func (p *params) tune(cfg Config) {
	p.cfg, p.burst = cfg, int64(cfg.Burst)
	switch {
	case math.IsInf(cfg.Rate, 1):
		p.inf = true
	case cfg.Rate == 0 || cfg.Rate == resilience.Off:
		p.inc, p.tau = 1, p.burst // no refill: units never pass
	default:
		t := interval(cfg.Rate)
		inc := ceil(t)
		if limit := maxTau / p.burst; inc > limit {
			inc = limit
		}
		p.inc = inc
		p.tau = inc * p.burst
		// k = inc/T <= 2, times 1<<kShift, rounded down.
		k := new(big.Rat).Quo(new(big.Rat).SetInt64(inc), t)
		k.Mul(k, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), kShift)))
		q, r := new(big.Int).QuoRem(k.Num(), k.Denom(), new(big.Int))
		p.k = q.Uint64()
		if r.Sign() != 0 {
			p.kUp = 1
		}
		p.ns = p.k == 1<<kShift && p.kUp == 0
		p.fastNS = p.fast && p.ns
	}
}

// interval returns the emission interval T = 1e9/rate in nanoseconds, as
// an exact fraction (rate is a dyadic rational). A T within a relative
// 2^-50 of a whole number of nanoseconds is taken as exactly that number,
// so that Every(d) round-trips to exactly d despite float64 rounding.
func interval(rate float64) *big.Rat {
	if f := 1e9 / rate; math.Abs(f-math.Round(f)) <= math.Round(f)*0x1p-50 {
		return new(big.Rat).SetFloat64(math.Round(f))
	}
	return new(big.Rat).Quo(new(big.Rat).SetInt64(1e9), new(big.Rat).SetFloat64(rate))
}

// ceil returns the smallest integer >= t, for 1 <= t.
func ceil(t *big.Rat) int64 {
	q, r := new(big.Int).QuoRem(t.Num(), t.Denom(), new(big.Int))
	if r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		return math.MaxInt64
	}
	return q.Int64()
}

// elapsed returns the nanoseconds since the origin, within [0, maxElapsed].
// It never goes back: a clock other than the real one (whose monotonic
// reading cannot) may be stepped back, and the limiter's time then stands
// still at the latest time read until the clock passes it, so that a step
// back is not charged as tokens spent.
func (p *params) elapsed() int64 {
	if p.fast {
		return min(max(int64(time.Since(p.origin)), 0), maxElapsed)
	}
	e := min(max(int64(p.clk.Now().Sub(p.origin)), 0), maxElapsed)
	for {
		l := p.last.Load()
		if e <= l {
			return l
		}
		if p.last.CompareAndSwap(l, e) {
			return e
		}
	}
}

// nameSuffix returns " (Name)", or "" when the limiter has no name.
func (p *params) nameSuffix() string {
	if p.cfg.Name == "" {
		return ""
	}
	return " (" + p.cfg.Name + ")"
}

// units converts ns in [0, maxElapsed] to units, rounding down.
func (p *params) units(ns int64) int64 {
	lo, _ := p.unitsRange(ns)
	return lo
}

// unitsRange converts ns in [0, maxElapsed] to units: lo <= ns·inc/T <= hi.
func (p *params) unitsRange(ns int64) (lo, hi int64) {
	h, l := bits.Mul64(uint64(ns), p.k) // ns·k, rounded down
	lo = int64(h<<(64-kShift) | l>>kShift)
	l, c := bits.Add64(l, uint64(ns)*p.kUp, 0) // ns·(k+kUp), rounded up
	h += c
	hi = int64(h<<(64-kShift) | l>>kShift)
	if l<<(64-kShift) != 0 {
		hi++
	}
	return lo, hi
}

// now returns the current time in units: lo <= now <= hi.
//
// With the real clock it reads time.Since here, not through elapsed: one
// frame less on every call of the limiter.
func (p *params) now() (lo, hi int64) {
	if p.fast {
		return p.unitsRange(min(max(int64(time.Since(p.origin)), 0), maxElapsed))
	}
	return p.unitsRange(p.elapsed())
}

// waitFor returns the shortest duration d after which the time in units,
// read at ns since the origin, has grown by at least u > 0: lo(ns+d) >=
// lo(ns) + u. It is never when Rate is 0 or d does not fit a Duration.
func (p *params) waitFor(ns, u int64) time.Duration {
	if p.k == 0 {
		return never
	}
	// d = ceil((u·2^kShift - frac) / k), frac = ns·k mod 2^kShift.
	_, l := bits.Mul64(uint64(ns), p.k)
	frac := l & (1<<kShift - 1)
	lo, borrow := bits.Sub64(uint64(u)<<kShift, frac, 0)
	hi := uint64(u)>>(64-kShift) - borrow
	if hi >= p.k {
		return never
	}
	q, r := bits.Div64(hi, lo, p.k)
	if r != 0 {
		q++
	}
	return time.Duration(min(q, uint64(never)))
}
