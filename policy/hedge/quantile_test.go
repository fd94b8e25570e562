package hedge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// selectWithin is selectKth under a bound, for failure only: a selection
// that never ends (a partition that stops moving) fails instead of
// hanging. It fails with a panic, which ends the test binary: the
// goroutine spins for good, and the tests and examples after this one
// (go test's -failfast does not stop the examples) would hang on the
// same fault.
func selectWithin(t *testing.T, s []int64, k int) int64 {
	t.Helper()
	n := len(s)
	done := make(chan int64, 1)
	go func() { done <- selectKth(s, k) }()
	select {
	case v := <-done:
		return v
	case <-time.After(2 * time.Second):
		panic(fmt.Sprintf("%s: selectKth of %d elements for k = %d did not return within 2s", t.Name(), n, k))
	}
}

func TestSelectKth(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 2000 {
		n := 1 + rng.IntN(300)
		s := make([]int64, n)
		for i := range s {
			s[i] = rng.Int64N(int64(1 + trial%50)) // many duplicates, sometimes all equal
		}
		sorted := slices.Sorted(slices.Values(s))
		k := rng.IntN(n)
		if got := selectWithin(t, slices.Clone(s), k); got != sorted[k] {
			t.Fatalf("selectKth(%v, %d) = %d, want %d", s, k, got, sorted[k])
		}
	}
}

// The delay is New's (within the bounds) until 100 latencies are in, then
// the exact quantile of the last 1024, recomputed every 32, within the
// bounds.
func TestEstimator(t *testing.T) {
	ms := time.Millisecond
	e := newEstimator(0.95, 5*ms, 80*ms, time.Second)
	if got := e.current(); got != 80*ms {
		t.Fatalf("before any latency: delay %v, want New's 1s within MaxDelay 80ms", got)
	}
	for i := range 99 {
		e.record(time.Duration(i+1) * ms)
	}
	if got := e.current(); got != 80*ms {
		t.Fatalf("after 99 latencies: delay %v, want still the initial 80ms", got)
	}
	e.record(100 * ms) // 1..100ms: p95 is 95ms, bounded to 80ms
	if got := e.current(); got != 80*ms {
		t.Fatalf("after 1..100ms: delay %v, want p95 95ms cut to MaxDelay 80ms", got)
	}
	// 2000 latencies of 2ms: the window holds only those, p95 2ms,
	// raised to MinDelay 5ms.
	for range 2000 {
		e.record(2 * ms)
	}
	if got := e.current(); got != 5*ms {
		t.Fatalf("after 2000 latencies of 2ms: delay %v, want MinDelay 5ms", got)
	}
	// Unbounded, over a known window.
	e = newEstimator(0.9, 0, 0, time.Second)
	var all []int64
	for i := range 1024 + 64 {
		d := time.Duration((i*7919)%1000+1) * time.Microsecond
		e.record(d)
		all = append(all, int64(d))
	}
	last := slices.Sorted(slices.Values(all[len(all)-1024:]))
	if want := time.Duration(last[int(math.Ceil(0.9*1024))-1]); e.current() != want {
		t.Fatalf("p90 of the last 1024: delay %v, want %v", e.current(), want)
	}
}

// Over any run of calls, the budget lets through at most fraction × calls
// + max(1, 10 × fraction) hedges, and that many (less the first call's
// share, which finds the budget full) when every call takes all it holds.
func TestBudgetBound(t *testing.T) {
	for _, f := range []float64{0.01, 0.05, 0.1, 0.5, 1, 2} {
		b := newBudget(f)
		burst := max(1, 10*f)
		granted := 0
		for call := 1; call <= 10000; call++ {
			b.deposit()
			bound := f*float64(call) + burst
			for b.withdraw() { // bounded: it fails once past the bound
				if granted++; float64(granted) > bound+1e-6 {
					t.Fatalf("fraction %v: %d hedges after %d calls, above the bound %v", f, granted, call, bound)
				}
			}
		}
		if want := f*9999 + burst; math.Abs(float64(granted)-want) > 1 {
			t.Errorf("fraction %v: %d hedges over 10000 greedy calls, want about %v", f, granted, want)
		}
	}
}

// The delay is recomputed at the 100th latency and then at every 32nd
// (128, 160, ...), not in between, over the latencies recorded so far.
func TestEstimatorRecomputesEvery32(t *testing.T) {
	ms := time.Millisecond
	e := newEstimator(0.9, 0, 0, time.Second)
	for i := range 99 {
		e.record(10 * ms)
		if got := e.current(); got != time.Second {
			t.Fatalf("after %d latencies: delay %v, want the initial 1s until 100 are in", i+1, got)
		}
	}
	e.record(10 * ms)
	if got := e.current(); got != 10*ms {
		t.Fatalf("after 100 latencies of 10ms: delay %v, want their p90 10ms", got)
	}
	for i := 101; i <= 127; i++ {
		e.record(time.Second)
		if got := e.current(); got != 10*ms {
			t.Fatalf("after %d latencies: delay %v, want still 10ms until the 128th", i, got)
		}
	}
	e.record(time.Second) // 100 of 10ms, 28 of 1s: the p90 (the 116th) is 1s
	if got := e.current(); got != time.Second {
		t.Fatalf("after 128 latencies: delay %v, want their p90 1s", got)
	}
}

// Before the window is full the quantile is over exactly the latencies
// recorded: the p0.1 of 100 latencies of 10 to 109ms is the smallest,
// 10ms, not an empty slot's 0 nor the second smallest.
func TestEstimatorReadsOnlyTheRecorded(t *testing.T) {
	e := newEstimator(0.001, 0, 0, time.Second)
	for i := range 100 {
		e.record(time.Duration(10+i) * time.Millisecond)
	}
	if got := e.current(); got != 10*time.Millisecond {
		t.Fatalf("p0.1 of 100 latencies of 10 to 109ms: delay %v, want 10ms", got)
	}
}

// A latency of 0 (an attempt that took no time on the clock) counts as 0,
// and a negative one as 0 as well; with no MinDelay the delay can be 0.
func TestEstimatorZeroLatency(t *testing.T) {
	e := newEstimator(0.5, 0, 0, time.Second)
	for i := range 100 {
		e.record(-time.Duration(i % 2)) // 0 and -1ns
	}
	if got := e.current(); got != 0 {
		t.Fatalf("p50 of 100 latencies of 0 and -1ns: delay %v, want 0", got)
	}
}

// A MaxDelay of 1ns, the smallest, bounds the delay as any other does.
func TestEstimatorMaxDelayOf1ns(t *testing.T) {
	e := newEstimator(0.5, 0, time.Nanosecond, time.Second)
	if got := e.current(); got != time.Nanosecond {
		t.Fatalf("initial 1s with MaxDelay 1ns: delay %v, want 1ns", got)
	}
}

// A budget of a vast fraction is no cap that matters: every call gets its
// hedge, the budget does not overflow into an empty one.
func TestBudgetVastFraction(t *testing.T) {
	for _, f := range []float64{1e6, 1e300, math.MaxFloat64} {
		b := newBudget(f)
		for call := range 100 {
			b.deposit()
			if !b.withdraw() {
				t.Fatalf("fraction %v: call %d found the budget empty", f, call)
			}
		}
	}
}

// A fraction under a millionth still refills the budget: at a millionth
// of a hedge per call (the unit the budget counts in), not at none.
func TestBudgetTinyFraction(t *testing.T) {
	b := newBudget(1e-6) // the least Budget Validate accepts
	if !b.withdraw() {
		t.Fatal("a new budget holds no hedge, want the burst of 1")
	}
	if b.withdraw() {
		t.Fatal("the budget holds a second hedge, want the burst of 1 only")
	}
	for range oneHedge {
		b.deposit()
	}
	if !b.withdraw() {
		t.Fatal("after a million calls at a fraction of 1e-6, the budget holds no hedge; want one (a millionth a call)")
	}
}
