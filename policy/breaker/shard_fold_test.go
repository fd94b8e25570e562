package breaker

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// Successes counted under the breaker's lock (a slow one, a trial's) fold
// a full shard word like any other, and successes that find their word
// full, or that come one after another from one goroutine, are no
// collisions.

// A slow success, counted under the lock, folds a full word and counts.
func TestSlowSuccessFoldsAFullWord(t *testing.T) {
	f := clock.NewFake()
	b := New(WithClock(f), WithThreshold(1), WithSlowCall(time.Second))
	gen := wordGen(b.word.Load())
	b.s0.succ.Store(tag(gen) | countMask)
	p, _ := b.Allow()
	f.Advance(2 * time.Second)
	do(t, "a slow success on a full word", func() { p.Done(nil) })
	if got, want := b.Counts(), (Counts{Calls: countMask + 1, Successes: countMask + 1, Slow: 1, ConsecutiveSuccesses: countMask + 1}); got != want {
		t.Errorf("Counts() = %+v, want %+v", got, want)
	}
}

// A half-open trial's success, counted under the lock, folds a full word
// and counts, whether the trial was slow or not.
func TestTrialSuccessFoldsAFullWord(t *testing.T) {
	for _, took := range []time.Duration{0, 2 * time.Second} {
		f := clock.NewFake()
		var left []Counts
		b := New(WithClock(f), WithThreshold(1), WithCooldown(time.Minute), WithSlowCall(time.Second),
			WithOnStateChange(func(tr Transition) { left = append(left, tr.Counts) }))
		b.Record(true)
		f.Advance(time.Minute)
		if s := b.State(); s != HalfOpen {
			t.Fatalf("State() = %v, want half-open", s)
		}
		gen := wordGen(b.word.Load())
		b.s0.succ.Store(tag(gen) | countMask)
		p, err := b.Allow()
		if err != nil {
			t.Fatal(err)
		}
		f.Advance(took)
		do(t, "a trial's success on a full word", func() { p.Done(nil) })
		// Slow, it reopened the breaker; else, with the full word's
		// successes, it closed it: either way the trial is counted in the
		// counts of the half-open state it left.
		if got := left[len(left)-1].Successes; got != countMask+1 {
			t.Errorf("trial of %v: the half-open state left with %d successes, want %d", took, got, uint64(countMask)+1)
		}
	}
}

// A success that finds its shard's word full is not a collision: it folds
// the word, and the set does not grow however many there are.
func TestFullWordIsNoCollision(t *testing.T) {
	b := New(WithClock(clock.NewFake()))
	gen := wordGen(b.word.Load())
	for range 2 * growAfter {
		b.s0.succ.Store(tag(gen) | countMask)
		b.missedSuccess(gen)
	}
	if b.isGrown() {
		t.Error("successes finding a full word grew the set")
	}
}

// One goroutine's successes never collide, timed or not: its calls one
// after another never grow the set.
func TestOneGoroutineNeverGrowsTheSet(t *testing.T) {
	for name, o := range map[string]Option{
		"untimed":     WithThreshold(5),
		"SlowCall":    WithSlowCall(time.Second),
		"time window": WithWindowDuration(time.Minute),
	} {
		b := New(WithClock(clock.NewFake()), o)
		do(t, name+": the calls", func() {
			for range 4 * growAfter {
				p, _ := b.Allow()
				p.Done(nil)
			}
		})
		if b.isGrown() {
			t.Errorf("%s: one goroutine's successes grew the set", name)
		}
	}
}
