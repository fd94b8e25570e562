package backoff

import (
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/f0b5b96b/resilience/internal/lockedrand"
)

// kind is the growth rule of a Schedule. The zero kind is unset, so the
// zero Schedule is distinct from every schedule a constructor returns.
type kind uint8

const (
	kindUnset kind = iota
	kindConstant
	kindLinear
	kindExponential
)

// Schedule is a delay schedule: the recipe that says how long to wait before
// each retry of one execution. Delays are [time.Duration] values
// (nanoseconds); none is negative and none exceeds [Schedule.Max].
//
// The zero Schedule is "not set": a Config field that holds one means
// that field's documented default (for a retry policy, exponential backoff
// with full jitter), as every zero field does. Used directly, it gives no
// delay, as Constant(0) does, but it is not equal to Constant(0), which is
// the schedule of no wait said explicitly. [Schedule.IsZero] tells them
// apart.
//
// A Schedule is an immutable value: it is safe to copy and to share, and
// methods such as [Schedule.WithJitter] return a modified copy. It is safe
// for simultaneous use by multiple goroutines, with the default random
// source and with one given to [Schedule.WithRand].
type Schedule struct {
	kind   kind
	jitter Jitter
	base   time.Duration // first delay; also the floor of Decorrelated jitter
	step   time.Duration // Linear only
	max    time.Duration // cap of every delay
	mult   float64       // Exponential only
	lnMult float64       // Exponential only: math.Log(mult)
	rnd    *rand.Rand    // nil: top-level math/rand/v2 functions
}

// Constant returns a schedule whose delay is d before every retry. Its
// [Schedule.Max] is d. Constant(0) is the schedule of no wait at all.
// Constant panics if d < 0.
func Constant(d time.Duration) Schedule {
	if d < 0 {
		panic(fmt.Sprintf("backoff: Constant delay must be >= 0, got %v", d))
	}
	return Schedule{kind: kindConstant, base: d, max: d}
}

// Linear returns a schedule whose delay grows by step before each retry:
// base before the first retry, base+step before the second, base+2·step
// before the third, and so on, never exceeding max (the growth saturates at
// max instead of overflowing).
//
// Linear panics if base < 0, step < 0 or max < base, and if base and step
// are both 0 while max is above 0: such a schedule could never give a delay
// above 0, yet its [Schedule.Max] would promise one. (Linear(0, 0, 0), like
// the zero Schedule, is valid and gives no delay at all.)
func Linear(base, step, max time.Duration) Schedule {
	if base < 0 {
		panic(fmt.Sprintf("backoff: Linear base must be >= 0, got %v", base))
	}
	if step < 0 {
		panic(fmt.Sprintf("backoff: Linear step must be >= 0, got %v", step))
	}
	if max < base {
		panic(fmt.Sprintf("backoff: Linear max must be >= base (%v), got %v", base, max))
	}
	if base == 0 && step == 0 && max > 0 {
		panic(fmt.Sprintf("backoff: Linear step must be > 0 when base is 0 and max > 0, got %v (max %v)", step, max))
	}
	if max == 0 {
		step = 0 // every delay is 0: the step says nothing
	}
	return Schedule{kind: kindLinear, base: base, step: step, max: max}
}

// Exponential returns a schedule whose delay grows by a factor of multiplier
// before each retry: base before the first retry, base·multiplier before the
// second, base·multiplier² before the third, and so on, never exceeding max
// (the growth saturates at max instead of overflowing). Delays are computed
// in floating point, with a relative error below about 1e-13 for any retry
// number, and rounded to the nearest nanosecond. A multiplier of 1 gives a
// constant delay of base.
//
// Exponential panics if base < 0, if multiplier is NaN, infinite or less
// than 1, if max < base, and if base is 0 while max is above 0: growth from
// 0 stays at 0, so such a schedule could never give a delay above 0, yet its
// [Schedule.Max] would promise one. (Exponential(0, m, 0), like the zero
// Schedule, is valid and gives no delay at all.)
func Exponential(base time.Duration, multiplier float64, max time.Duration) Schedule {
	if base < 0 {
		panic(fmt.Sprintf("backoff: Exponential base must be >= 0, got %v", base))
	}
	if math.IsNaN(multiplier) || math.IsInf(multiplier, 1) {
		panic(fmt.Sprintf("backoff: Exponential multiplier must be finite, got %v", multiplier))
	}
	if multiplier < 1 {
		panic(fmt.Sprintf("backoff: Exponential multiplier must be >= 1, got %v", multiplier))
	}
	if max < base {
		panic(fmt.Sprintf("backoff: Exponential max must be >= base (%v), got %v", base, max))
	}
	if base == 0 && max > 0 {
		panic(fmt.Sprintf("backoff: Exponential base must be > 0 when max > 0, got %v (max %v)", base, max))
	}
	return Schedule{kind: kindExponential, base: base, mult: multiplier, lnMult: math.Log(multiplier), max: max}
}

// Jitter selects how a [Schedule] randomizes its delays, so that clients
// retrying the same failure do not retry in lockstep. The kinds follow Marc
// Brooker, "Exponential Backoff And Jitter", AWS Architecture Blog, 2015
// (https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/).
//
// Below, d is the schedule's un-jittered delay for a retry, already capped at
// [Schedule.Max]; "uniform in [lo, hi]" includes both ends. No kind of jitter
// ever gives a delay above [Schedule.Max].
//
// The zero Jitter is [None].
type Jitter uint8

const (
	// None gives the un-jittered delay d.
	None Jitter = iota
	// Full gives a delay uniform in [0, d].
	Full
	// Equal gives d/2 plus a delay uniform in [0, d-d/2]: it keeps at least
	// half of d.
	Equal
	// Decorrelated replaces the schedule's own growth (its step or
	// multiplier): each delay is min(max, uniform in [base, 3·prev]), where
	// prev is the previous delay of the same [Sequence] (base before the
	// first retry), and base is the schedule's first un-jittered delay.
	// Delays stay in [base, max]. With Constant(d) every delay is d.
	// [Schedule.WithJitter] panics when Decorrelated is asked of a schedule
	// whose base is 0 but that grows (base 0 would keep every delay at 0).
	Decorrelated
)

// String returns "none", "full", "equal" or "decorrelated", or "Jitter(n)"
// for an unknown value n.
func (j Jitter) String() string {
	switch j {
	case None:
		return "none"
	case Full:
		return "full"
	case Equal:
		return "equal"
	case Decorrelated:
		return "decorrelated"
	}
	return "Jitter(" + strconv.Itoa(int(j)) + ")"
}

// WithJitter returns a copy of s that randomizes its delays as j says. It
// panics if j is not one of [None], [Full], [Equal] or [Decorrelated], and
// for Decorrelated on a schedule with base 0 and a max above 0.
func (s Schedule) WithJitter(j Jitter) Schedule {
	if j > Decorrelated {
		panic(fmt.Sprintf("backoff: WithJitter jitter must be None, Full, Equal or Decorrelated, got %v", j))
	}
	if j == Decorrelated && s.base == 0 && s.max > 0 {
		// Decorrelated delays grow from base: from 0 they would stay 0 and
		// quietly turn a growing schedule into no backoff at all.
		panic(fmt.Sprintf("backoff: WithJitter Decorrelated needs a base > 0, got %v", s))
	}
	s.jitter = j
	return s
}

// WithRand returns a copy of s that draws its jitter from r. A nil r selects
// the default source, the top-level functions of math/rand/v2. A seeded r
// makes the delays reproducible: the same seed gives the same delays, draw
// for draw, which is useful in tests.
//
// Concurrency: a [rand.Rand] is not safe for simultaneous use, so the
// returned schedule draws from r under a mutex of its own; the schedule and
// the sequences started from it (each used by one goroutine at a time, as
// any [Sequence]) may then run on many goroutines at once. Sequences that
// draw at the same time take r's numbers in the order they reach the mutex.
// r must not be used elsewhere (by another WithRand, say) while the schedule
// is in use. WithRand allocates once; a draw does not.
func (s Schedule) WithRand(r *rand.Rand) Schedule {
	s.rnd = lockedrand.New(r)
	return s
}

// Max returns the cap of s: the upper bound of every delay s gives, jittered
// or not. It is d for Constant(d), the max argument for [Linear] and
// [Exponential], and 0 for the zero Schedule.
//
// Max() > 0 means real waits: the constructors refuse schedules whose
// delays could never leave 0 under a cap above 0, so without jitter every
// delay from the second retry on is above 0 (the first is 0 only for
// Linear with base 0). Max() == 0 means no delay at all.
func (s Schedule) Max() time.Duration { return s.max }

// IsZero reports whether s is the zero Schedule: not set.
func (s Schedule) IsZero() bool { return s == Schedule{} }

// Start returns a fresh [Sequence] for one execution: its first
// [Sequence.Next] is the delay before the first retry. Start does not
// allocate.
func (s Schedule) Start() Sequence { return Sequence{s: s} }

// Delays returns the infinite sequence of delays of one fresh execution: the
// first value is the delay before the first retry, and so on. Each range over
// the result starts over with a fresh [Sequence]. The loop must end by
// breaking out of it.
func (s Schedule) Delays() iter.Seq[time.Duration] {
	return func(yield func(time.Duration) bool) {
		q := s.Start()
		for yield(q.Next()) {
		}
	}
}

// String describes s, for example "constant(1s)", "linear(100ms+50ms, max
// 1s)" or "exponential(100ms×2, max 10s, full jitter)"; the zero Schedule is
// "unset". The random source is not shown.
func (s Schedule) String() string {
	var b strings.Builder
	switch s.kind {
	case kindUnset:
		return "unset"
	case kindConstant:
		fmt.Fprintf(&b, "constant(%v", s.base)
	case kindLinear:
		fmt.Fprintf(&b, "linear(%v+%v, max %v", s.base, s.step, s.max)
	case kindExponential:
		fmt.Fprintf(&b, "exponential(%v×%s, max %v", s.base,
			strconv.FormatFloat(s.mult, 'g', -1, 64), s.max)
	}
	if s.jitter != None {
		fmt.Fprintf(&b, ", %v jitter", s.jitter)
	}
	b.WriteByte(')')
	return b.String()
}

// delay returns the un-jittered delay before retry n (n >= 1), in [0, max].
func (s *Schedule) delay(n uint64) time.Duration {
	switch s.kind {
	case kindLinear:
		k := n - 1
		if s.step == 0 || k == 0 {
			return s.base
		}
		// s.max >= s.base >= 0, so the subtraction cannot overflow, and
		// base + k·step <= max whenever k <= (max-base)/step.
		if k > uint64((s.max-s.base)/s.step) {
			return s.max
		}
		return s.base + time.Duration(k)*s.step
	case kindExponential:
		if s.base == 0 {
			return 0 // max is 0 too; also avoids 0·Inf = NaN
		}
		// base·mult^(n-1). math.Pow multiplies by repeated squaring, which is
		// exact when the result is representable and accurate to ~1e-14 for
		// small exponents, but can be off by 1e-7 for large exponents of
		// multipliers close to 1. There e^((n-1)·ln mult) stays within ~1e-14.
		// Both are finite or +Inf (never NaN): n-1 and ln mult are finite
		// and >= 0, and base > 0.
		var p float64
		if n-1 < 64 {
			p = math.Pow(s.mult, float64(n-1))
		} else {
			p = math.Exp(float64(n-1) * s.lnMult)
		}
		f := math.Round(float64(s.base) * p)
		// Compare in float64 before converting: f may be +Inf or beyond
		// the int64 range. Negated so that NaN also saturates.
		if !(f < float64(s.max)) {
			return s.max
		}
		d := time.Duration(f)
		if d > s.max || d < 0 { // defensive; unreachable
			return s.max
		}
		return d
	}
	return s.base
}

// uniform returns a delay uniform in [lo, hi], for 0 <= lo <= hi.
func (s *Schedule) uniform(lo, hi time.Duration) time.Duration {
	if lo == hi {
		return lo
	}
	// hi-lo < 2⁶³, so the +1 cannot overflow a uint64.
	n := uint64(hi-lo) + 1
	if s.rnd != nil {
		return lo + time.Duration(s.rnd.Uint64N(n))
	}
	return lo + time.Duration(rand.Uint64N(n))
}

// Sequence is one execution's walk through a [Schedule]: it counts the
// retries and remembers the previous delay, on which [Decorrelated] jitter
// depends. Get one from [Schedule.Start]; it is a small value and does not
// allocate.
//
// A Sequence is not safe for simultaneous use. Its zero value behaves as one
// started from the zero Schedule: every delay is 0.
type Sequence struct {
	s    Schedule
	n    uint64        // retries so far; saturates
	prev time.Duration // previous delay: jittered for Decorrelated, else un-jittered
}

// Next returns the delay to wait before the next retry: the first call
// returns the delay before retry 1, the second the delay before retry 2, and
// so on, without end. The result is in [0, Max] of the schedule. Without
// jitter, successive results never decrease.
func (q *Sequence) Next() time.Duration {
	s := &q.s
	if q.n == 0 {
		q.prev = s.base
	}
	if q.n != math.MaxUint64 {
		q.n++
	}
	if s.jitter == Decorrelated {
		hi := time.Duration(math.MaxInt64)
		if q.prev <= hi/3 {
			hi = 3 * q.prev
		}
		d := min(s.max, s.uniform(s.base, hi))
		q.prev = d
		return d
	}
	// The running maximum keeps the schedule non-decreasing even if
	// floating-point rounding in an Exponential delay were not monotonic;
	// once at the cap, the delay stays there.
	d := s.max
	if q.prev < s.max {
		d = max(q.prev, s.delay(q.n))
		q.prev = d
	}
	switch s.jitter {
	case Full:
		return s.uniform(0, d)
	case Equal:
		return d/2 + s.uniform(0, d-d/2)
	}
	return d
}
