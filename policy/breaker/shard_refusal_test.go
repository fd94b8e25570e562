package breaker

import (
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// The refusal and success counters of the shards, at their edges: a grown
// set, a refusal or a success that lost a race with a transition, a full
// word, the size of the set by GOMAXPROCS, and the growth's one report.

// A grown breaker's refusals land in the set's shards, and count there:
// in the generation's Refused and in the lifetime total.
func TestGrownBreakerCountsRefusals(t *testing.T) {
	b := grown(New(WithClock(clock.NewFake()), WithThreshold(1), WithCooldown(time.Minute)))
	b.Record(true)
	for range 5 {
		if _, err := b.Allow(); err == nil {
			t.Fatal("Allow() admitted a call while open")
		}
	}
	if got := b.Counts().Refused; got != 5 {
		t.Errorf("Counts().Refused = %d, want 5", got)
	}
	if got := b.Stats().Refused; got != 5 {
		t.Errorf("Stats().Refused = %d, want 5", got)
	}
}

// A refusal counted after its generation ended (it lost the race with a
// transition: b.reject of the old generation) counts in the lifetime total
// only, and does not retag the word of the current generation.
func TestRefusalOfAnEndedGenerationCountsInTheTotalOnly(t *testing.T) {
	b := New(WithClock(clock.NewFake()), WithThreshold(1), WithCooldown(time.Minute))
	b.Record(true)
	old := wordGen(b.word.Load())
	_, _ = b.Allow() // counted in old's word
	b.ForceOpen()
	_, _ = b.Allow() // retags the word for the new generation
	b.reject(old, false)
	if got := b.Counts().Refused; got != 1 {
		t.Errorf("Counts().Refused = %d, want 1: the late refusal is not the current generation's", got)
	}
	if got := b.Stats().Refused; got != 3 {
		t.Errorf("Stats().Refused = %d, want 3: every refusal in the total", got)
	}
}

// A refusal that finds, once it holds the lock, the word already retagged
// for its generation (by another refusal, in between) counts in it.
func TestRefusalFindingItsWordRetaggedCountsInIt(t *testing.T) {
	b := New(WithClock(clock.NewFake()), WithThreshold(1), WithCooldown(time.Minute))
	b.Record(true)
	gen := wordGen(b.word.Load())
	_, _ = b.Allow() // tags s0's word for gen
	do(t, "the refusal", func() { b.rejectSlow(&b.s0.rej, gen, false) })
	if got := b.Counts().Refused; got != 2 {
		t.Errorf("Counts().Refused = %d, want 2", got)
	}
	if got := b.Stats().Refused; got != 2 {
		t.Errorf("Stats().Refused = %d, want 2", got)
	}
}

// On the real clock, a refusal sharing the fresh hint that finds its word
// full counts all the same: the full count goes into the lifetime total
// and the word starts over.
func TestFreshRefusalOnAFullWordCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(WithThreshold(1), WithCooldown(time.Second))
		b.Record(true)
		_, _ = b.Allow() // takes the lock and freshens the hint
		gen := wordGen(b.word.Load())
		b.s0.rej.Store(tag(gen) | countMask)
		_, _ = b.Allow() // shares the fresh hint
		if got, want := b.Stats().Refused, uint64(countMask)+1; got != want {
			t.Errorf("Stats().Refused = %d, want %d", got, want)
		}
		if got := b.Counts().Refused; got != 1 {
			t.Errorf("Counts().Refused = %d, want 1: the word started over", got)
		}
		b.Reset() // stops the hint's timer
	})
}

// A success of a generation that has ended, finding its shard's word full,
// counts nothing and returns: it does not fold a count into the new
// generation, nor retry for ever.
func TestStaleSuccessOnAFullWordReturns(t *testing.T) {
	b := New(WithClock(clock.NewFake()))
	gen := wordGen(b.word.Load())
	b.s0.succ.Store(tag(gen) | countMask)
	b.Reset()
	do(t, "a stale success on a full word", func() { b.addSuccess(gen, false) })
	if got := b.Counts().Successes; got != 0 {
		t.Errorf("Counts().Successes = %d, want 0", got)
	}
}

// The grown set has at least 4 shards per P, a power of two from 16 to 128.
func TestGrownSetSize(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range []struct{ procs, want int }{{1, 16}, {4, 16}, {5, 32}, {8, 32}, {9, 64}, {32, 128}, {64, 128}} {
		runtime.GOMAXPROCS(c.procs)
		b := within(t, "growing the set", func() *Breaker { return grown(New(WithClock(clock.NewFake()))) })
		if got := len(b.grownShards((*shardSet)(atomic.LoadPointer(&b.set)))); got != c.want {
			t.Errorf("GOMAXPROCS %d: %d shards, want %d", c.procs, got, c.want)
		}
	}
}

// Only the growAfter-th collision of an epoch reports that the set must
// grow: the ones after it (while it grows) do not.
func TestOnlyOneCollisionGrowsTheSet(t *testing.T) {
	b := New(WithClock(clock.NewFake()))
	at := int64(time.Hour)
	grew := 0
	for i := range 2 * growAfter {
		if b.noteCollision(at + int64(i)) {
			grew++
		}
	}
	if grew != 1 {
		t.Errorf("%d collisions in an epoch reported growth %d times, want once", 2*growAfter, grew)
	}
}

// An epoch lasts growWithin from its first collision: a collision exactly
// growWithin later starts a new one.
func TestCollisionEpochEndsAfterGrowWithin(t *testing.T) {
	b := New(WithClock(clock.NewFake()))
	at := int64(time.Hour)
	for range growAfter - 1 {
		if b.noteCollision(at) {
			t.Fatal("fewer than growAfter collisions grew the set")
		}
	}
	if b.noteCollision(at + int64(growWithin)) {
		t.Errorf("a collision %v after the epoch began counted in it", growWithin)
	}
}

// On a clock read by every refusal, a refusal that finds its word full
// counts all the same: the full count goes into the lifetime total and the
// word starts over.
func TestRefusalOnAFullWordCounts(t *testing.T) {
	b := New(WithClock(clock.NewFake()), WithThreshold(1), WithCooldown(time.Minute))
	b.Record(true)
	gen := wordGen(b.word.Load())
	b.s0.rej.Store(tag(gen) | countMask)
	_, _ = b.Allow()
	if got, want := b.Stats().Refused, uint64(countMask)+1; got != want {
		t.Errorf("Stats().Refused = %d, want %d", got, want)
	}
	if got := b.Counts().Refused; got != 1 {
		t.Errorf("Counts().Refused = %d, want 1: the word started over", got)
	}
}

// Collisions in a breaker's first microsecond (its time 0) make an epoch
// like any other.
func TestCollisionsAtTimeZeroGrowTheSet(t *testing.T) {
	b := New(WithClock(clock.NewFake()))
	for i := range growAfter {
		if grew := b.noteCollision(int64(i)); grew != (i == growAfter-1) {
			t.Fatalf("collision %d at %dns: grew %v", i+1, i, grew)
		}
	}
}

// A grown breaker with a time-based window counts the successes of every
// shard's ring, whatever the number of buckets.
func TestGrownTimeWindowCountsEveryShard(t *testing.T) {
	for _, buckets := range []int{1, 10} {
		b := grown(New(WithClock(clock.NewFake()), WithFailureRatio(0.5),
			WithWindowDuration(time.Minute), WithWindowBuckets(buckets)))
		b.Record(false) // this goroutine's shard
		gen := wordGen(b.word.Load())
		ss := b.grownShards((*shardSet)(atomic.LoadPointer(&b.set)))
		for i := range ss {
			ss[i].ring.add(b, gen, 0)
		}
		if got, want := b.Counts().Successes, uint64(len(ss))+1; got != want {
			t.Errorf("%d buckets: Counts().Successes = %d, want %d", buckets, got, want)
		}
	}
}

// An epoch starts at its first collision, also in a breaker's first
// growWithin: 63 collisions 50ms after the breaker's time 0 and one 70ms
// later are in one epoch.
func TestFirstEpochStartsAtItsFirstCollision(t *testing.T) {
	b := New(WithClock(clock.NewFake()))
	const ms = int64(time.Millisecond)
	for range growAfter - 1 {
		if b.noteCollision(50 * ms) {
			t.Fatal("fewer than growAfter collisions grew the set")
		}
	}
	if !b.noteCollision(120 * ms) {
		t.Errorf("the %d-th collision, %v after the first, did not grow the set", growAfter, 70*time.Millisecond)
	}
}
