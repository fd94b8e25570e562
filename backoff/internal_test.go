package backoff

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

const maxDur = time.Duration(math.MaxInt64)

// at returns a Sequence of s positioned after n retries, so that its next
// Next is the delay before retry n+1. It lets tests reach attempt numbers
// that calling Next could never reach.
func at(s Schedule, n uint64) Sequence {
	q := s.Start()
	if n > 0 {
		q.n = n
		q.prev = s.base
	}
	return q
}

func TestHugeAttempts(t *testing.T) {
	tests := []struct {
		name string
		s    Schedule
		n    uint64 // retry number, >= 1
		want time.Duration
	}{
		{"constant/maxuint64", Constant(time.Second), math.MaxUint64, time.Second},
		{"constant/maxint64", Constant(maxDur), math.MaxUint64, maxDur},
		{"linear/2^40", Linear(100*time.Millisecond, time.Second, time.Hour), 1 << 40, time.Hour},
		{"linear/maxuint64", Linear(1, 1, maxDur), math.MaxUint64, maxDur},
		{"linear/step overflow", Linear(0, maxDur, maxDur), 3, maxDur},
		{"linear/base+step overflow", Linear(maxDur-1, maxDur, maxDur), 2, maxDur},
		{"linear/just below cap", Linear(0, 1, maxDur), 1 << 62, 1<<62 - 1},
		{"linear/k=maxint64", Linear(0, 1, maxDur), 1 << 63, maxDur},
		{"linear/k=2^63", Linear(0, 1, maxDur), 1<<63 + 1, maxDur},
		{"linear/k*step wraps", Linear(0, 3, maxDur), 1<<62 + 1, maxDur},
		{"linear/zero step", Linear(time.Second, 0, time.Hour), math.MaxUint64, time.Second},
		{"exponential/2^40", Exponential(100*time.Millisecond, 2, 10*time.Second), 1 << 40, 10 * time.Second},
		{"exponential/maxuint64", Exponential(100*time.Millisecond, 2, 10*time.Second), math.MaxUint64, 10 * time.Second},
		{"exponential/beyond int32", Exponential(time.Nanosecond, 1.0000000001, maxDur), 1 << 62, maxDur},
		{"exponential/multiplier 1", Exponential(time.Nanosecond, 1, maxDur), math.MaxUint64, time.Nanosecond},
		{"exponential/base 0", Exponential(0, 2, 0), math.MaxUint64, 0},
		{"exponential/max multiplier", Exponential(1, math.MaxFloat64, maxDur), 2, maxDur},
		{"exponential/maxint64 base", Exponential(maxDur, 1.5, maxDur), math.MaxUint64, maxDur},
		{"exponential/2^62 uncapped", Exponential(1, 2, maxDur), 63, 1 << 62},
		{"exponential/2^63 capped", Exponential(1, 2, maxDur), 64, maxDur},
		{"zero", Schedule{}, math.MaxUint64, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.delay(tt.n); got != tt.want {
				t.Errorf("%v: delay(%d) = %v (%d), want %v (%d)", tt.s, tt.n, got, int64(got), tt.want, int64(tt.want))
			}
			q := at(tt.s, tt.n-1)
			if got := q.Next(); got != tt.want {
				t.Errorf("%v: Next after %d retries = %v, want %v", tt.s, tt.n-1, got, tt.want)
			}
		})
	}
}

func TestAttemptCounterSaturates(t *testing.T) {
	s := Linear(0, time.Second, time.Minute)
	q := at(s, math.MaxUint64-1)
	for range 3 {
		if got := q.Next(); got != time.Minute {
			t.Fatalf("Next = %v, want %v", got, time.Minute)
		}
		if q.n != math.MaxUint64 {
			t.Fatalf("attempt counter = %d, want it to saturate at %d", q.n, uint64(math.MaxUint64))
		}
	}
}

// refLinear is min(max, base+(n-1)·step) computed exactly.
func refLinear(base, step, max time.Duration, n uint64) time.Duration {
	v := new(big.Int).SetUint64(n - 1)
	v.Mul(v, big.NewInt(int64(step)))
	v.Add(v, big.NewInt(int64(base)))
	if v.Cmp(big.NewInt(int64(max))) > 0 {
		return max
	}
	return time.Duration(v.Int64())
}

// refExponential is base·mult^(n-1) to 256 bits, or +Inf if it is far
// beyond any Duration.
func refExponential(base time.Duration, mult float64, n uint64) float64 {
	if base == 0 {
		return 0
	}
	r := new(big.Float).SetPrec(256).SetInt64(int64(base))
	b := new(big.Float).SetPrec(256).SetFloat64(mult)
	for k := n - 1; k > 0; k >>= 1 {
		if k&1 == 1 {
			r.Mul(r, b)
			if r.MantExp(nil) > 70 {
				return math.Inf(1)
			}
		}
		if b.MantExp(nil) > 70 {
			// b > 2⁶⁹ and a higher bit of k is set.
			return math.Inf(1)
		}
		b.Mul(b, b)
	}
	f, _ := r.Float64()
	return f
}

// checkExact compares un-jittered delay d before retry n with the exact
// value.
func checkExact(t *testing.T, s Schedule, n uint64, d time.Duration) {
	t.Helper()
	switch s.kind {
	case kindConstant:
		if d != s.base {
			t.Fatalf("%v: retry %d: delay %v, want %v", s, n, d, s.base)
		}
	case kindLinear:
		if want := refLinear(s.base, s.step, s.max, n); d != want {
			t.Fatalf("%v: retry %d: delay %v, want %v", s, n, d, want)
		}
	case kindExponential:
		want := min(refExponential(s.base, s.mult, n), float64(s.max))
		if diff := math.Abs(float64(d) - want); diff > 1+want*1e-12 {
			t.Fatalf("%v: retry %d: delay %v (%d), want ~%g (diff %g)", s, n, d, int64(d), want, diff)
		}
	}
}

func TestExponentialAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		mult := 1 + math.Pow(2, -r.Float64()*52)
		if r.IntN(2) == 0 {
			mult = 1 + 4*r.Float64()
		}
		base := time.Duration(1 + r.Int64N(int64(time.Second)))
		// An n around where the delay reaches the cap.
		n := uint64(r.Float64()*math.Log(float64(maxDur)/float64(base))/math.Log(mult)) + 1
		s := Exponential(base, mult, maxDur)
		checkExact(t, s, n, s.delay(n))
	}
}

// validInput reports whether the constructor of kind k accepts its
// arguments, as the documentation states.
func validInput(k kind, base, step, max time.Duration, mult float64) bool {
	switch k {
	case kindConstant:
		return base >= 0
	case kindLinear:
		return base >= 0 && step >= 0 && max >= base && (base > 0 || step > 0 || max == 0)
	default:
		return base >= 0 && mult >= 1 && !math.IsInf(mult, 1) && max >= base && (base > 0 || max == 0)
	}
}

func build(k kind, base, step, max time.Duration, mult float64) (s Schedule, msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg, _ = r.(string)
			if msg == "" {
				msg = "non-string panic"
			}
		}
	}()
	switch k {
	case kindConstant:
		return Constant(base), ""
	case kindLinear:
		return Linear(base, step, max), ""
	default:
		return Exponential(base, mult, max), ""
	}
}

func withJitter(s Schedule, j Jitter) (_ Schedule, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			panicked = true
		}
	}()
	return s.WithJitter(j), false
}

func FuzzDelayBounds(f *testing.F) {
	type seed struct {
		kind            uint8
		base, step, max int64
		mult            float64
		attempt         uint64
		jitter          uint8
		seed            uint64
	}
	for _, s := range []seed{
		{0, int64(time.Second), 0, 0, 0, 0, 0, 1},
		{0, math.MaxInt64, 0, 0, 0, math.MaxUint64, 3, 2},
		{0, -1, 0, 0, 0, 0, 0, 3},
		{1, int64(100 * time.Millisecond), int64(50 * time.Millisecond), int64(time.Second), 0, 5, 1, 4},
		{1, 0, math.MaxInt64, math.MaxInt64, 0, 2, 2, 5},
		{1, 1, 1, math.MaxInt64, 0, math.MaxUint64 - 1, 0, 6},
		{1, math.MaxInt64 - 1, math.MaxInt64, math.MaxInt64, 0, 1, 3, 7},
		{1, 10, -1, 100, 0, 0, 0, 8},
		{1, 10, 1, 9, 0, 0, 0, 9},
		{2, int64(100 * time.Millisecond), 0, int64(10 * time.Second), 2, 0, 1, 10},
		{2, int64(100 * time.Millisecond), 0, int64(10 * time.Second), 2, 1 << 40, 2, 11},
		{2, 1, 0, math.MaxInt64, 1, math.MaxUint64 - 1, 0, 12},
		{2, 1, 0, math.MaxInt64, 1.0000000000000002, 1 << 61, 0, 13},
		{2, math.MaxInt64, 0, math.MaxInt64, math.MaxFloat64, 1, 3, 14},
		{2, 0, 0, math.MaxInt64, 1e300, math.MaxUint64, 2, 15},
		{2, 1, 0, 2, math.NaN(), 0, 0, 16},
		{2, 1, 0, 2, math.Inf(1), 0, 0, 17},
		{2, 1, 0, 2, math.Inf(-1), 0, 0, 18},
		{2, 1, 0, 2, 0.5, 0, 0, 19},
		{2, int64(time.Second), 0, int64(time.Minute), 1.5, 3, 4, 20},
	} {
		f.Add(s.kind, s.base, s.step, s.max, s.mult, s.attempt, s.jitter, s.seed)
	}
	f.Fuzz(func(t *testing.T, kindArg uint8, baseArg, stepArg, maxArg int64, mult float64, attempt uint64, jitterArg uint8, seed uint64) {
		k := kind(kindArg % 3)
		base, step, max := time.Duration(baseArg), time.Duration(stepArg), time.Duration(maxArg)
		s, msg := build(k, base, step, max, mult)
		valid := validInput(k, base, step, max, mult)
		switch {
		case msg != "" && valid:
			t.Fatalf("constructor %d(%v, %v, %v, %v) panicked on valid input: %s", k, base, step, max, mult, msg)
		case msg != "":
			if !strings.HasPrefix(msg, "backoff: ") {
				t.Fatalf("panic message %q lacks the \"backoff: \" prefix", msg)
			}
			return
		case !valid:
			t.Fatalf("constructor %d(%v, %v, %v, %v) accepted invalid input: %v", k, base, step, max, mult, s)
		}
		j := Jitter(jitterArg % 5)
		wantPanic := j > Decorrelated || (j == Decorrelated && base == 0 && s.Max() > 0)
		s, panicked := withJitter(s, j)
		if panicked != wantPanic {
			t.Fatalf("WithJitter(%v): panicked = %v", j, panicked)
		}
		if panicked {
			return
		}
		s = s.WithRand(rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)))

		if k == kindConstant {
			max = base
		}
		if s.Max() != max {
			t.Fatalf("%v: Max() = %v, want %v", s, s.Max(), max)
		}
		lo := time.Duration(0)
		if j == Decorrelated {
			lo = base
		}
		// check walks q for a few retries, the first being retry n+1.
		check := func(q Sequence, n uint64) {
			prev := q.prev
			if n == 0 {
				prev = base // what the first Decorrelated delay depends on
			}
			for i := range uint64(16) {
				d := q.Next()
				if d < lo || d > max {
					t.Fatalf("%v: retry %d: delay %v outside [%v, %v]", s, n+i+1, d, lo, max)
				}
				if n+i+1 == 0 { // the counter saturated
					return
				}
				switch j {
				case None:
					// A cap above 0 means real waits: from retry 2 on
					// (Linear from base 0 starts at 0), none is 0.
					if max > 0 && n+i+1 >= 2 && d == 0 {
						t.Fatalf("%v: retry %d: delay 0 though Max is %v", s, n+i+1, max)
					}
					if d < prev {
						t.Fatalf("%v: retry %d: delay %v below the previous %v", s, n+i+1, d, prev)
					}
					checkExact(t, s, n+i+1, d)
				case Decorrelated:
					if hi := 3 * float64(prev); float64(d) > hi {
						t.Fatalf("%v: retry %d: delay %v above 3·previous (%v)", s, n+i+1, d, prev)
					}
				}
				prev = d
			}
		}
		check(s.Start(), 0)
		check(at(s, attempt), attempt)
	})
}
