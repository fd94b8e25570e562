package ratelimit

import (
	"math"
	"math/bits"
	"time"

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
// unit a little under a nanosecond, and a clock reading in nanoseconds is
// converted to units by a fixed-point multiply, rounding down: a decision
// may then fall up to one unit (under 1ns) later than an exact token bucket
// would make it. (When Burst·T exceeds 1<<61 ns, inc is lowered so that
// tau fits, and a unit grows above 1ns accordingly.)

const (
	maxTau     = 1 << 61 // units; tau never exceeds it
	maxElapsed = 1 << 61 // ns (73 years) since the origin; time stops there
	kShift     = 62      // fraction bits of kfp
	never      = time.Duration(math.MaxInt64)
)

// params is what every bucket of one configuration shares; immutable.
type params struct {
	inf    bool   // Rate +Inf: admit everything
	inc    int64  // units per event
	tau    int64  // Burst·inc: the bucket's capacity in units
	burst  int64  // Config.Burst
	kfp    uint64 // units per nanosecond, times 1<<kShift; 0 when Rate is 0
	origin time.Time
	clk    clock.Clock // never nil
	fast   bool        // clk is the real clock: read it with time.Since
	cfg    Config
	layer  string // the policy's layer name
}

func newParams(cfg Config) *params {
	p := &params{cfg: cfg, burst: int64(cfg.Burst), clk: cfg.Clock, layer: "ratelimit"}
	if cfg.Name != "" {
		p.layer += "(" + cfg.Name + ")"
	}
	if p.clk == nil {
		p.clk = clock.Real()
	}
	p.fast = p.clk == clock.Real()
	p.origin = p.clk.Now()
	switch {
	case math.IsInf(cfg.Rate, 1):
		p.inf = true
	case cfg.Rate == 0:
		p.inc, p.tau = 1, p.burst // no refill: units never pass
	default:
		t := 1e9 / cfg.Rate // ns per event, >= 1
		// A T within float64 rounding of a whole number of ns is that
		// number, so that Every(d) round-trips to exactly d.
		if r := math.Round(t); math.Abs(t-r) <= r*0x1p-50 {
			t = r
		}
		inc := min(math.Ceil(t), math.Floor(maxTau/float64(p.burst)))
		p.inc = int64(inc)
		p.tau = p.inc * p.burst
		p.kfp = uint64(math.Round(math.Ldexp(inc/t, kShift))) // inc/t <= 2
	}
	return p
}

// elapsed returns the nanoseconds since the origin, within [0, maxElapsed].
func (p *params) elapsed() int64 {
	var d time.Duration
	if p.fast {
		d = time.Since(p.origin)
	} else {
		d = p.clk.Now().Sub(p.origin)
	}
	return min(max(int64(d), 0), maxElapsed)
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
	hi, lo := bits.Mul64(uint64(ns), p.kfp)
	return int64(hi<<(64-kShift) | lo>>kShift)
}

// duration converts a wait of u > 0 units to the shortest duration after
// which at least u units have passed (never, when Rate is 0 or the wait
// does not fit a Duration).
func (p *params) duration(u int64) time.Duration {
	hi, lo := uint64(u)>>(64-kShift), uint64(u)<<kShift
	if hi >= p.kfp {
		return never
	}
	q, r := bits.Div64(hi, lo, p.kfp)
	if r != 0 {
		q++
	}
	return time.Duration(min(q, uint64(never)))
}
