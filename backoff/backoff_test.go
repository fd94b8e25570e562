package backoff_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/backoff"
)

const (
	ms     = time.Millisecond
	maxDur = time.Duration(math.MaxInt64)
)

// next returns the first n delays of a fresh Sequence of s.
func next(s backoff.Schedule, n int) []time.Duration {
	q := s.Start()
	ds := make([]time.Duration, n)
	for i := range ds {
		ds[i] = q.Next()
	}
	return ds
}

func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 2)) }

func TestUnjitteredDelays(t *testing.T) {
	tests := []struct {
		name string
		s    backoff.Schedule
		want []time.Duration
	}{
		{"zero", backoff.Schedule{}, []time.Duration{0, 0, 0}},
		{"constant/0", backoff.Constant(0), []time.Duration{0, 0, 0}},
		{"constant/1s", backoff.Constant(time.Second), []time.Duration{time.Second, time.Second, time.Second}},
		{"constant/maxint64", backoff.Constant(maxDur), []time.Duration{maxDur, maxDur}},
		{"linear", backoff.Linear(100*ms, 50*ms, 300*ms), []time.Duration{100 * ms, 150 * ms, 200 * ms, 250 * ms, 300 * ms, 300 * ms, 300 * ms}},
		{"linear/cap between steps", backoff.Linear(0, 40*ms, 100*ms), []time.Duration{0, 40 * ms, 80 * ms, 100 * ms, 100 * ms}},
		{"linear/zero step", backoff.Linear(time.Second, 0, time.Hour), []time.Duration{time.Second, time.Second, time.Second}},
		{"linear/max == base", backoff.Linear(time.Second, time.Second, time.Second), []time.Duration{time.Second, time.Second}},
		{"linear/overflowing step", backoff.Linear(1, maxDur, maxDur), []time.Duration{1, maxDur, maxDur, maxDur}},
		{"exponential/×2", backoff.Exponential(100*ms, 2, time.Second), []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second, time.Second}},
		{"exponential/×1.5", backoff.Exponential(100*ms, 1.5, time.Second), []time.Duration{100 * ms, 150 * ms, 225 * ms, 337500 * time.Microsecond, 506250 * time.Microsecond, 759375 * time.Microsecond, time.Second}},
		{"exponential/rounding", backoff.Exponential(1, 1.4, time.Second), []time.Duration{1, 1, 2, 3, 4, 5, 8}},
		{"exponential/×1", backoff.Exponential(time.Second, 1, time.Hour), []time.Duration{time.Second, time.Second, time.Second}},
		{"exponential/base 0, max 0", backoff.Exponential(0, 2, 0), []time.Duration{0, 0, 0}},
		{"exponential/huge multiplier", backoff.Exponential(1, math.MaxFloat64, maxDur), []time.Duration{1, maxDur, maxDur}},
		{"exponential/to maxint64", backoff.Exponential(1<<61, 2, maxDur), []time.Duration{1 << 61, 1 << 62, maxDur, maxDur}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := next(tt.s, len(tt.want)); !slices.Equal(got, tt.want) {
				t.Errorf("%v: delays\n got %v\nwant %v", tt.s, got, tt.want)
			}
		})
	}
}

func TestZeroSequence(t *testing.T) {
	var q backoff.Sequence
	for range 3 {
		if d := q.Next(); d != 0 {
			t.Fatalf("zero Sequence: Next = %v, want 0", d)
		}
	}
}

// The zero Schedule is "not set", which a Config reads as its default;
// Constant(0) is "no wait", said explicitly. Both give no delay.
func TestZeroScheduleIsNotConstantZero(t *testing.T) {
	if backoff.Constant(0) == (backoff.Schedule{}) || backoff.Constant(0).IsZero() {
		t.Error("Constant(0) is the zero Schedule; a Config could not tell \"no wait\" from \"not set\"")
	}
	if !(backoff.Schedule{}).IsZero() {
		t.Error("Schedule{}.IsZero() = false")
	}
}

func TestMax(t *testing.T) {
	tests := []struct {
		s    backoff.Schedule
		want time.Duration
	}{
		{backoff.Schedule{}, 0},
		{backoff.Constant(time.Second), time.Second},
		{backoff.Linear(ms, ms, time.Second), time.Second},
		{backoff.Exponential(ms, 2, time.Minute).WithJitter(backoff.Full), time.Minute},
	}
	for _, tt := range tests {
		if got := tt.s.Max(); got != tt.want {
			t.Errorf("%v.Max() = %v, want %v", tt.s, got, tt.want)
		}
	}
}

func TestPanics(t *testing.T) {
	tests := []struct {
		name string
		f    func()
		want string
	}{
		{"constant/negative", func() { backoff.Constant(-1) }, "backoff: Constant delay must be >= 0, got -1ns"},
		{"linear/negative base", func() { backoff.Linear(-time.Second, ms, time.Second) }, "backoff: Linear base must be >= 0, got -1s"},
		{"linear/negative step", func() { backoff.Linear(0, -ms, time.Second) }, "backoff: Linear step must be >= 0, got -1ms"},
		{"linear/max < base", func() { backoff.Linear(time.Second, ms, 500*ms) }, "backoff: Linear max must be >= base (1s), got 500ms"},
		{"exponential/negative base", func() { backoff.Exponential(-ms, 2, time.Second) }, "backoff: Exponential base must be >= 0, got -1ms"},
		{"exponential/multiplier < 1", func() { backoff.Exponential(ms, 0.5, time.Second) }, "backoff: Exponential multiplier must be >= 1, got 0.5"},
		{"exponential/multiplier 0", func() { backoff.Exponential(ms, 0, time.Second) }, "backoff: Exponential multiplier must be >= 1, got 0"},
		{"exponential/multiplier -Inf", func() { backoff.Exponential(ms, math.Inf(-1), time.Second) }, "backoff: Exponential multiplier must be >= 1, got -Inf"},
		{"exponential/multiplier +Inf", func() { backoff.Exponential(ms, math.Inf(1), time.Second) }, "backoff: Exponential multiplier must be finite, got +Inf"},
		{"exponential/multiplier NaN", func() { backoff.Exponential(ms, math.NaN(), time.Second) }, "backoff: Exponential multiplier must be finite, got NaN"},
		{"exponential/max < base", func() { backoff.Exponential(time.Second, 2, 0) }, "backoff: Exponential max must be >= base (1s), got 0s"},
		{"jitter/unknown", func() { backoff.Constant(0).WithJitter(4) }, "backoff: WithJitter jitter must be None, Full, Equal or Decorrelated, got Jitter(4)"},
		{"jitter/decorrelated from 0", func() { backoff.Linear(0, time.Second, time.Hour).WithJitter(backoff.Decorrelated) }, "backoff: WithJitter Decorrelated needs a base > 0, got linear(0s+1s, max 1h0m0s)"},
		{"jitter/decorrelated from 0, max 1ns", func() { backoff.Linear(0, 1, 1).WithJitter(backoff.Decorrelated) }, "backoff: WithJitter Decorrelated needs a base > 0, got linear(0s+1ns, max 1ns)"},
		{"jitter/255", func() { backoff.Constant(0).WithJitter(255) }, "backoff: WithJitter jitter must be None, Full, Equal or Decorrelated, got Jitter(255)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil {
					t.Fatalf("no panic, want %q", tt.want)
				}
				if msg, _ := r.(string); msg != tt.want {
					t.Errorf("panic %#v, want %q", r, tt.want)
				}
			}()
			tt.f()
		})
	}
}

// Regression: Exponential(0, m, max) and Linear(0, 0, max) had a Max above
// 0 but gave only delays of 0, so a retry policy that trusts "Max() > 0"
// to bound an unlimited number of attempts looped without waiting.
func TestZeroDelaysWithPositiveMaxRefused(t *testing.T) {
	for _, tt := range []struct {
		f    func()
		want string
	}{
		{func() { backoff.Exponential(0, 2, time.Second) }, "backoff: Exponential base must be > 0 when max > 0, got 0s (max 1s)"},
		{func() { backoff.Exponential(0, 1, maxDur) }, "backoff: Exponential base must be > 0 when max > 0, got 0s (max 2562047h47m16.854775807s)"},
		{func() { backoff.Exponential(0, 2, 1) }, "backoff: Exponential base must be > 0 when max > 0, got 0s (max 1ns)"},
		{func() { backoff.Linear(0, 0, time.Second) }, "backoff: Linear step must be > 0 when base is 0 and max > 0, got 0s (max 1s)"},
		{func() { backoff.Linear(0, 0, 1) }, "backoff: Linear step must be > 0 when base is 0 and max > 0, got 0s (max 1ns)"},
	} {
		got := func() (msg string) {
			defer func() {
				if r := recover(); r != nil {
					msg, _ = r.(string)
				}
			}()
			tt.f()
			return "no panic"
		}()
		if got != tt.want {
			t.Errorf("panic %q, want %q", got, tt.want)
		}
	}
	// What stays valid: a max of 0, and base 0 with a step.
	for _, s := range []backoff.Schedule{
		backoff.Exponential(0, 2, 0),
		backoff.Linear(0, 0, 0),
		backoff.Linear(0, 1, 1),
	} {
		if ds := next(s, 2); s.Max() > 0 && ds[1] == 0 {
			t.Errorf("%v: Max %v but delays %v", s, s.Max(), ds)
		}
	}
}

func TestNoPanicAtLimits(t *testing.T) {
	// The boundary values the constructors accept.
	backoff.Constant(0)
	backoff.Constant(maxDur)
	backoff.Linear(0, 0, 0)
	backoff.Linear(maxDur, maxDur, maxDur)
	backoff.Exponential(0, 1, 0)
	backoff.Exponential(maxDur, math.MaxFloat64, maxDur)
	for j := backoff.None; j <= backoff.Decorrelated; j++ {
		backoff.Constant(0).WithJitter(j)
	}
}

func TestJitterString(t *testing.T) {
	for j, want := range map[backoff.Jitter]string{
		backoff.None:         "none",
		backoff.Full:         "full",
		backoff.Equal:        "equal",
		backoff.Decorrelated: "decorrelated",
		7:                    "Jitter(7)",
	} {
		if got := j.String(); got != want {
			t.Errorf("Jitter(%d).String() = %q, want %q", uint8(j), got, want)
		}
	}
}

func TestScheduleString(t *testing.T) {
	tests := []struct {
		s    backoff.Schedule
		want string
	}{
		{backoff.Schedule{}, "unset"},
		{backoff.Constant(0), "constant(0s)"},
		{backoff.Constant(time.Second), "constant(1s)"},
		{backoff.Constant(time.Second).WithJitter(backoff.Equal), "constant(1s, equal jitter)"},
		{backoff.Linear(100*ms, 50*ms, time.Second), "linear(100ms+50ms, max 1s)"},
		{backoff.Exponential(100*ms, 2, 10*time.Second).WithJitter(backoff.Full), "exponential(100ms×2, max 10s, full jitter)"},
		{backoff.Exponential(100*ms, 1.5, time.Minute).WithJitter(backoff.Decorrelated).WithRand(seeded(1)), "exponential(100ms×1.5, max 1m0s, decorrelated jitter)"},
	}
	for _, tt := range tests {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestWithJitterNone(t *testing.T) {
	s := backoff.Exponential(100*ms, 2, time.Second)
	if got, want := next(s.WithJitter(backoff.Full).WithJitter(backoff.None), 6), next(s, 6); !slices.Equal(got, want) {
		t.Errorf("WithJitter(None) after Full: %v, want %v", got, want)
	}
}

// draws is enough draws that a uniform delay lands in each 1% end of its
// range with overwhelming probability.
const draws = 10000

func TestFullJitter(t *testing.T) {
	d := time.Second
	q := backoff.Constant(d).WithJitter(backoff.Full).WithRand(seeded(1)).Start()
	lo, hi := maxDur, time.Duration(0)
	for range draws {
		v := q.Next()
		if v < 0 || v > d {
			t.Fatalf("Full jitter delay %v outside [0, %v]", v, d)
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo > d/100 || hi < d-d/100 {
		t.Errorf("Full jitter delays span [%v, %v], want near [0, %v]", lo, hi, d)
	}
}

func TestFullJitterFollowsSchedule(t *testing.T) {
	s := backoff.Exponential(100*ms, 2, time.Second)
	want := next(s, 8)
	for seed := range uint64(200) {
		got := next(s.WithJitter(backoff.Full).WithRand(seeded(seed)), 8)
		for i := range got {
			if got[i] < 0 || got[i] > want[i] {
				t.Fatalf("seed %d: retry %d: Full jitter delay %v outside [0, %v]", seed, i+1, got[i], want[i])
			}
		}
	}
}

func TestEqualJitter(t *testing.T) {
	for _, d := range []time.Duration{time.Second, 3, 1, 0, maxDur} {
		q := backoff.Constant(d).WithJitter(backoff.Equal).WithRand(seeded(1)).Start()
		lo, hi := maxDur, time.Duration(0)
		for range draws {
			v := q.Next()
			if v < d/2 || v > d {
				t.Fatalf("Equal jitter delay %v outside [%v, %v]", v, d/2, d)
			}
			lo, hi = min(lo, v), max(hi, v)
		}
		if spread := (d - d/2) / 100; lo > d/2+spread || hi < d-spread {
			t.Errorf("Equal jitter of %v: delays span [%v, %v], want near [%v, %v]", d, lo, hi, d/2, d)
		}
	}
}

func TestEqualJitterFollowsSchedule(t *testing.T) {
	s := backoff.Linear(100*ms, 100*ms, time.Second)
	want := next(s, 12)
	for seed := range uint64(200) {
		got := next(s.WithJitter(backoff.Equal).WithRand(seeded(seed)), 12)
		for i := range got {
			if got[i] < want[i]/2 || got[i] > want[i] {
				t.Fatalf("seed %d: retry %d: Equal jitter delay %v outside [%v, %v]", seed, i+1, got[i], want[i]/2, want[i])
			}
		}
	}
}

func TestDecorrelatedJitter(t *testing.T) {
	const base, maxD = 10 * ms, 10 * time.Second
	// The step is ignored: Decorrelated replaces the schedule's own growth.
	for _, s := range []backoff.Schedule{
		backoff.Exponential(base, 2, maxD),
		backoff.Linear(base, time.Hour, maxD),
	} {
		s = s.WithJitter(backoff.Decorrelated)
		sawAbove3Base, sawCap := false, false
		for seed := range uint64(50) {
			q := s.WithRand(seeded(seed)).Start()
			prev := base
			for i := range 100 {
				d := q.Next()
				if d < base || d > maxD {
					t.Fatalf("%v: seed %d, retry %d: delay %v outside [%v, %v]", s, seed, i+1, d, base, maxD)
				}
				// Depends on the previous delay: at most 3× it.
				if d > 3*prev {
					t.Fatalf("%v: seed %d, retry %d: delay %v above 3×previous %v", s, seed, i+1, d, prev)
				}
				sawAbove3Base = sawAbove3Base || d > 3*base
				sawCap = sawCap || d == maxD
				prev = d
			}
		}
		// A delay drawn from [base, 3·base] every time would never exceed 3·base.
		if !sawAbove3Base || !sawCap {
			t.Errorf("%v: delays above 3·base: %v, delays at the cap: %v; want both", s, sawAbove3Base, sawCap)
		}
	}
}

func TestDecorrelatedDegenerate(t *testing.T) {
	tests := []struct {
		s    backoff.Schedule
		want time.Duration
	}{
		{backoff.Constant(time.Second), time.Second},
		{backoff.Constant(maxDur), maxDur},
		{backoff.Exponential(0, 2, 0), 0},
		{backoff.Schedule{}, 0},
	}
	for _, tt := range tests {
		s := tt.s.WithJitter(backoff.Decorrelated).WithRand(seeded(1))
		for i, d := range next(s, 20) {
			if d != tt.want {
				t.Fatalf("%v: retry %d: delay %v, want %v", s, i+1, d, tt.want)
			}
		}
	}
}

func TestDeterminism(t *testing.T) {
	s := backoff.Exponential(100*ms, 2, time.Minute)
	for j := backoff.None; j <= backoff.Decorrelated; j++ {
		sj := s.WithJitter(j)
		a := next(sj.WithRand(seeded(42)), 50)
		b := next(sj.WithRand(seeded(42)), 50)
		if !slices.Equal(a, b) {
			t.Errorf("%v jitter: same seed, different delays:\n%v\n%v", j, a, b)
		}
		if j == backoff.None {
			continue
		}
		if c := next(sj.WithRand(seeded(43)), 50); slices.Equal(a, c) {
			t.Errorf("%v jitter: seeds 42 and 43 give the same delays %v", j, a)
		}
	}
}

func TestDelays(t *testing.T) {
	s := backoff.Exponential(100*ms, 2, time.Second)
	want := next(s, 6)
	collect := func() []time.Duration {
		var got []time.Duration
		for d := range s.Delays() {
			got = append(got, d)
			if len(got) == len(want) {
				break
			}
		}
		return got
	}
	seq := s.Delays()
	for i := range 2 { // each range starts over
		if got := collect(); !slices.Equal(got, want) {
			t.Errorf("range %d over Delays: %v, want %v", i, got, want)
		}
		var got []time.Duration
		for d := range seq {
			if got = append(got, d); len(got) == 3 {
				break
			}
		}
		if !slices.Equal(got, want[:3]) {
			t.Errorf("range %d over the same Delays value: %v, want %v", i, got, want[:3])
		}
	}
}

func TestDelaysMatchesSequence(t *testing.T) {
	s := backoff.Linear(ms, 2*ms, 20*ms).WithJitter(backoff.Equal)
	want := next(s.WithRand(seeded(5)), 20)
	var got []time.Duration
	for d := range s.WithRand(seeded(5)).Delays() {
		if got = append(got, d); len(got) == 20 {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("Delays: %v\nSequence: %v", got, want)
	}
}

func TestScheduleIsAValue(t *testing.T) {
	s := backoff.Exponential(100*ms, 2, time.Second)
	want := next(s, 5)
	q1 := s.Start()
	q1.Next()
	q1.Next()
	_ = s.WithJitter(backoff.Full) // returns a copy; s is unchanged
	if got := next(s, 5); !slices.Equal(got, want) {
		t.Errorf("after using a Sequence and WithJitter, fresh delays %v, want %v", got, want)
	}
	q2 := q1 // copying a Sequence forks it
	if a, b := q1.Next(), q2.Next(); a != b || a != want[2] {
		t.Errorf("forked Sequences gave %v and %v, want %v", a, b, want[2])
	}
}

// TestConcurrentDefaultRand shares one schedule with the default random
// source across goroutines; run with -race.
func TestConcurrentDefaultRand(t *testing.T) {
	s := backoff.Exponential(ms, 2, time.Second)
	var wg sync.WaitGroup
	for j := backoff.None; j <= backoff.Decorrelated; j++ {
		for range 4 {
			wg.Go(func() {
				q := s.WithJitter(j).Start()
				for range 1000 {
					if d := q.Next(); d < 0 || d > time.Second {
						t.Errorf("delay %v outside [0, 1s]", d)
						return
					}
				}
			})
		}
	}
	wg.Wait()
}

func TestStartNextDoNotAllocate(t *testing.T) {
	for j := backoff.None; j <= backoff.Decorrelated; j++ {
		for _, s := range []backoff.Schedule{
			backoff.Exponential(ms, 2, time.Second).WithJitter(j),
			backoff.Linear(ms, ms, time.Second).WithJitter(j).WithRand(seeded(1)),
		} {
			var sink time.Duration
			allocs := testing.AllocsPerRun(100, func() {
				q := s.Start()
				for range 10 {
					sink += q.Next()
				}
			})
			if allocs != 0 {
				t.Errorf("%v: Start and Next: %v allocs per run, want 0", s, allocs)
			}
		}
	}
}

func BenchmarkSequenceNext(b *testing.B) {
	for j := backoff.None; j <= backoff.Decorrelated; j++ {
		b.Run(j.String(), func(b *testing.B) {
			s := backoff.Exponential(ms, 2, time.Minute).WithJitter(j)
			b.ReportAllocs()
			var sink time.Duration
			q := s.Start()
			i := 0
			for b.Loop() {
				if i++; i%32 == 0 { // measure growth, not only the cap
					q = s.Start()
				}
				sink += q.Next()
			}
			if sink < 0 {
				b.Fatal("negative delay")
			}
		})
	}
}

// A schedule with a seeded source may run sequences on many goroutines at
// once (under -race, a bare *rand.Rand would race), and between them they
// draw the seed's numbers: the same multiset of delays as one goroutine
// drawing them all.
func TestWithRandIsSafeForSimultaneousSequences(t *testing.T) {
	const goroutines, per = 8, 50
	s := backoff.Constant(time.Second).WithJitter(backoff.Full)
	shared := s.WithRand(seeded(7))
	var mu sync.Mutex
	var got []time.Duration
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			ds := next(shared, per)
			mu.Lock()
			got = append(got, ds...)
			mu.Unlock()
		})
	}
	wg.Wait()
	want := next(s.WithRand(seeded(7)), goroutines*per)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatal("sequences drawing at once did not share out the seed's delays")
	}
}

// edgeSource is a rand.Source that always returns v: with v = MaxUint64,
// rand.Rand.Uint64N(n) draws n-1, the top of its range; with v = 1 it
// draws 0 for any n that is not a power of two.
type edgeSource uint64

func (s edgeSource) Uint64() uint64 { return uint64(s) }

// The jitter ranges include both ends: a draw at the bottom or the top of
// a range gives that end exactly.
func TestJitterRangesIncludeBothEnds(t *testing.T) {
	bottom, top := rand.New(edgeSource(1)), rand.New(edgeSource(math.MaxUint64))
	const d = time.Second // d+1 is not a power of two
	huge := maxDur / 2    // 3·huge overflows an int64
	tests := []struct {
		name string
		s    backoff.Schedule
		r    *rand.Rand
		want []time.Duration
	}{
		{"full/bottom", backoff.Constant(d).WithJitter(backoff.Full), bottom, []time.Duration{0, 0}},
		{"full/top", backoff.Constant(d).WithJitter(backoff.Full), top, []time.Duration{d, d}},
		{"equal/bottom", backoff.Constant(d).WithJitter(backoff.Equal), bottom, []time.Duration{d / 2, d / 2}},
		{"equal/top", backoff.Constant(d).WithJitter(backoff.Equal), top, []time.Duration{d, d}},
		{"decorrelated/bottom", backoff.Exponential(d, 2, time.Hour).WithJitter(backoff.Decorrelated), bottom, []time.Duration{d, d, d}},
		{"decorrelated/top", backoff.Exponential(d, 2, time.Hour).WithJitter(backoff.Decorrelated), top, []time.Duration{3 * d, 9 * d, 27 * d, 81 * d, 243 * d, 729 * d, 2187 * d, time.Hour}},
		// 3·prev is exactly MaxInt64-1: the draw stays below the cap.
		{"decorrelated/top at 3·prev just below the cap", backoff.Exponential(maxDur/3, 2, maxDur).WithJitter(backoff.Decorrelated), top, []time.Duration{3 * (maxDur / 3), maxDur}},
		// 3·prev is beyond the int64 range: the draw reaches the cap.
		{"decorrelated/top with 3·prev past the int64 range", backoff.Exponential(huge, 2, maxDur).WithJitter(backoff.Decorrelated), top, []time.Duration{maxDur, maxDur}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := next(tt.s.WithRand(tt.r), len(tt.want))
			if !slices.Equal(got, tt.want) {
				t.Errorf("%v: delays %v, want %v", tt.s, got, tt.want)
			}
		})
	}
}
