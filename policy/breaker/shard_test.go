package breaker

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// grown returns b after growing its set of shards.
func grown(b *Breaker) *Breaker {
	b.grow()
	return b
}

// shardList returns b's shards, s0 first.
func shardList(b *Breaker) []*shard {
	var ss []*shard
	for s := range b.shards {
		ss = append(ss, s)
	}
	return ss
}

func TestShardCountFoldsBeforeOverflow(t *testing.T) {
	b := grown(New(WithClock(clock.NewFake()), WithThreshold(1)))
	gen := wordGen(b.word.Load())
	ss := shardList(b)
	for _, s := range ss {
		s.succ.Store(tag(gen) | (countMask - 1))
	}
	for range 3 {
		b.Record(false)
	}
	// Every shard holds 2³²-2; one of them took three more.
	want := uint64(len(ss))*(countMask-1) + 3
	if got := b.Counts().Successes; got != want {
		t.Fatalf("Successes = %d, want %d", got, want)
	}
	lockWithin(t, &b.mu, "the breaker's mutex")
	carry := b.carry
	b.mu.Unlock()
	if carry != countMask {
		t.Fatalf("carry = %d, want one fold of %d", carry, uint64(countMask))
	}
	b.Reset()
	if got := b.Counts().Successes; got != 0 {
		t.Fatalf("Successes after Reset = %d, want 0", got)
	}
}

func TestShardWordsOfOtherGenerationsDoNotCount(t *testing.T) {
	b := grown(New(WithClock(clock.NewFake())))
	gen := wordGen(b.word.Load())
	ss := shardList(b)
	ss[0].succ.Store(tag(gen+1) | 5) // a later generation's
	ss[1].succ.Store(tag(gen-1) | 7) // an earlier one's
	if got := b.Counts().Successes; got != 0 {
		t.Fatalf("Successes = %d, want 0", got)
	}
	// A stale add neither counts nor overwrites the current generation's
	// count, wherever it lands.
	for _, s := range ss {
		s.succ.Store(tag(gen) | 5)
	}
	b.addSuccess(gen-1, false)
	b.addSuccess(gen+1, false)
	if got, want := b.Counts().Successes, 5*uint64(len(ss)); got != want {
		t.Fatalf("Successes after stale adds = %d, want %d", got, want)
	}
}

func TestStreakSaturates(t *testing.T) {
	b := New(WithClock(clock.NewFake()), WithThreshold(1))
	b.ForceClosed()
	lockWithin(t, &b.mu, "the breaker's mutex")
	b.streak = math.MaxUint64 - 1
	b.mu.Unlock()
	b.Record(true)
	b.Record(true)
	if got := b.Counts().ConsecutiveFailures; got != math.MaxUint64 {
		t.Fatalf("ConsecutiveFailures = %d, want %d", got, uint64(math.MaxUint64))
	}
	b.Record(false)
	if got := b.Counts().ConsecutiveFailures; got != 0 {
		t.Fatalf("ConsecutiveFailures after a success = %d, want 0", got)
	}
}

func TestShardsSpreadGoroutines(t *testing.T) {
	b := grown(New())
	seen := map[*shard]bool{}
	var mu sync.Mutex
	var picked, wg sync.WaitGroup
	release := make(chan struct{})
	picked.Add(64)
	for range 64 {
		wg.Go(func() {
			// A goroutine's shard follows its stack, which moves when it
			// grows: grow it first, as a goroutine that has run a while has
			// (under -race, frames are large enough for the first calls to
			// grow it).
			growStack(64)
			s := b.shardFor()
			if s != b.shardFor() {
				t.Error("one goroutine picked two shards")
			}
			mu.Lock()
			seen[s] = true
			mu.Unlock()
			picked.Done()
			<-release // alive until all have picked: no goroutine reuses another's stack
		})
	}
	waitWithin(t, &picked, "64 goroutines picking a shard")
	close(release)
	waitWithin(t, &wg, "64 goroutines ending")
	if n := len(b.grownShards((*shardSet)(atomic.LoadPointer(&b.set)))); len(seen) < n/2 {
		t.Fatalf("64 goroutines used %d of %d shards", len(seen), n)
	}
}

// growStack uses about n×256 bytes of stack.
//
//go:noinline
func growStack(n int) byte {
	var buf [256]byte
	buf[n%256] = byte(n)
	if n > 0 {
		return growStack(n-1) + buf[n%256]
	}
	return buf[0]
}

// retained returns the heap bytes that n values made by f hold, per value,
// once garbage (a constructor's temporaries) is collected.
func retained[T any](n int, f func() *T) float64 {
	var before, after runtime.MemStats
	keep := make([]*T, n)
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range keep {
		keep[i] = f()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// TestBreakerAtRestIsSmall: a breaker of the default configuration holds
// at most 512 bytes whatever GOMAXPROCS is, and serial calls (which never
// collide) do not grow it.
func TestBreakerAtRestIsSmall(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 8, 32, 128} {
		runtime.GOMAXPROCS(procs)
		var b *Breaker
		// The least of three measures: an allocation of another
		// goroutine's (the runtime's, a test's still ending) only adds
		// to one of them.
		n := math.Inf(1)
		for range 3 {
			n = min(n, retained(1000, func() *Breaker { b = New(); return b }))
		}
		if n > 512 {
			t.Errorf("GOMAXPROCS %d: a new breaker holds %v bytes, want at most 512", procs, n)
		}
		for range 1000 {
			p, _ := b.Allow()
			p.Done(nil)
		}
		if b.isGrown() {
			t.Errorf("GOMAXPROCS %d: serial calls grew the shards", procs)
		}
	}
}

// TestCollisionEpochs: the growAfter-th collision within growWithin of an
// epoch's first grows the set; collisions further apart never do.
func TestCollisionEpochs(t *testing.T) {
	b := New(WithClock(clock.NewFake()))
	const µs = int64(time.Microsecond)
	at := int64(time.Hour)
	for i := range growAfter - 1 {
		if b.noteCollision(at + int64(i)*µs) {
			t.Fatalf("collision %d of an epoch grew the set", i+1)
		}
	}
	if !b.noteCollision(at + int64(growWithin) - µs) {
		t.Fatalf("collision %d within %v did not grow the set", growAfter, growWithin)
	}

	b = New(WithClock(clock.NewFake()))
	for i := range 10 * growAfter { // 63 an epoch, then a new epoch
		if b.noteCollision(at + int64(i/(growAfter-1))*int64(growWithin)) {
			t.Fatalf("collision %d grew the set, at fewer than %d per %v", i+1, growAfter, growWithin)
		}
	}
	// A clock that goes back starts a new epoch too.
	if b.noteCollision(0) {
		t.Fatal("a collision at an earlier time grew the set")
	}
}

// TestGrowthLosesNoCount: counts written to s0 before the set grows, and
// by writers that picked s0 before the switch, still count; writers after
// it use the set.
func TestGrowthLosesNoCount(t *testing.T) {
	f := clock.NewFake()
	for _, c := range []struct {
		name string
		opts []Option
	}{
		{"no window", nil},
		{"count window", []Option{WithWindowCalls(1000)}},
		{"time window", []Option{WithWindowDuration(time.Minute)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := New(append(c.opts, WithClock(f), WithThreshold(1000))...)
			for range 5 {
				b.Record(false)
			}
			b.Record(true)
			s0 := b.shardFor()
			for range growAfter {
				b.collided()
			}
			if !b.isGrown() {
				t.Fatalf("%d collisions at one instant did not grow the set", growAfter)
			}
			if b.shardFor() == s0 {
				t.Fatal("after growing, a goroutine still picks s0")
			}
			b.Record(false)
			b.Record(true)
			p, _ := b.Allow()
			p.Done(nil)
			want := Counts{Calls: 9, Successes: 7, Failures: 2, FailureRatio: 2.0 / 9, ConsecutiveSuccesses: 1}
			if got := b.Counts(); got != want {
				t.Fatalf("Counts() = %+v, want %+v", got, want)
			}
		})
	}
}

// TestGrowthUnderLoad: goroutines count successes while the set grows (by
// collisions, or by hand if they never collide): no count is lost.
func TestGrowthUnderLoad(t *testing.T) {
	const goroutines, calls = 8, 20000
	for _, name := range []string{"plain", "time window"} {
		t.Run(name, func(t *testing.T) {
			opts := []Option{WithClock(clock.NewFake())}
			if name == "time window" {
				opts = append(opts, WithWindowDuration(time.Hour))
			}
			b := New(opts...)
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for i := range calls {
						if g == 0 && i == calls/2 {
							b.grow()
						}
						b.Record(false)
					}
				})
			}
			waitWithin(t, &wg, "the counting goroutines")
			if got := b.Counts().Successes; got != goroutines*calls {
				t.Fatalf("Successes = %d, want %d", got, goroutines*calls)
			}
		})
	}
}

// TestMissedSuccessesGrowTheSet: a success whose compare-and-swap on s0
// failed (countSuccess returned false while s0 counts for its generation)
// is a collision; growAfter of them at one instant grow the set.
func TestMissedSuccessesGrowTheSet(t *testing.T) {
	b := New(WithClock(clock.NewFake()))
	gen := wordGen(b.word.Load())
	b.Record(false) // s0 now counts for gen
	for i := range growAfter {
		if b.isGrown() {
			t.Fatalf("grew after %d collisions", i)
		}
		b.missedSuccess(gen)
	}
	if !b.isGrown() {
		t.Fatalf("%d missed successes did not grow the set", growAfter)
	}
	// A success missed for another reason (s0 counts for another
	// generation) is no collision.
	b = New(WithClock(clock.NewFake()))
	for range 2 * growAfter {
		b.missedSuccess(gen + 1)
	}
	if b.isGrown() {
		t.Fatal("successes of another generation grew the set")
	}
}

// TestRingLockCollisionsGrowTheSet: with a time-based window, a success
// that finds s0's ring locked is a collision.
func TestRingLockCollisionsGrowTheSet(t *testing.T) {
	b := New(WithClock(clock.NewFake()), WithWindowDuration(time.Minute))
	gen := wordGen(b.word.Load())
	for i := range growAfter {
		b.s0.ring.mu.Lock()
		before := b.contention.Load()
		done := make(chan struct{})
		go func() {
			b.s0.ring.add(b, gen, 0)
			close(done)
		}()
		// The add counts its collision, then waits for the lock.
		for deadline := time.Now().Add(10 * time.Second); b.contention.Load() == before && !b.isGrown(); {
			if time.Now().After(deadline) {
				t.Fatalf("collision %d: the add never counted its collision", i+1)
			}
			runtime.Gosched()
		}
		b.s0.ring.mu.Unlock()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("collision %d: the add never took the lock", i+1)
		}
	}
	if !b.isGrown() {
		t.Fatalf("%d ring lock collisions did not grow the set", growAfter)
	}
	if got := b.Counts().Successes; got != growAfter {
		t.Fatalf("Successes = %d, want %d", got, growAfter)
	}
}

// TestContentionGrowsTheSet: goroutines hammering one breaker from
// several cores collide on s0, and the breaker grows its set by itself.
// Collisions need goroutines running at the same instant on different
// cores: on a machine that runs them in turns (a VM whose cores the host
// shares out) they are rare, and then the test says so and skips.
func TestContentionGrowsTheSet(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs GOMAXPROCS >= 2 for calls to collide")
	}
	b := New()
	for round := 0; !b.isGrown(); round++ {
		if round == 50 {
			t.Skipf("50 rounds of 8 goroutines × 10000 calls: at most %d collisions within %v here; the other tests check growth",
				b.contention.Load()&0xffff, growWithin)
		}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 10000 {
					p, _ := b.Allow()
					p.Done(nil)
				}
			})
		}
		waitWithin(t, &wg, "the calling goroutines")
	}
	if got := b.Counts().Successes; got%10000 != 0 {
		t.Fatalf("Successes = %d, want a multiple of 10000", got)
	}
}

// TestKeyedEntryOf: entryOf finds a Keyed's entry from its breaker.
func TestKeyedEntryOf(t *testing.T) {
	k := NewKeyed[string](WithClock(clock.NewFake()))
	b := k.Breaker("a")
	if e := entryOf[string](b); &e.Value != b || e.Key() != "a" {
		t.Fatalf("entryOf(b) = %p with key %q, want the entry of a", e, e.Key())
	}
}

func TestHintLife(t *testing.T) {
	for _, c := range []struct{ left, want time.Duration }{
		{time.Hour, time.Hour / 64},
		{time.Second, 15625 * time.Microsecond},
		{40 * time.Millisecond, time.Millisecond},
		{300 * time.Microsecond, 300 * time.Microsecond},
	} {
		if got := hintLife(int64(c.left)); got != c.want {
			t.Errorf("hintLife(%v) = %v, want %v", c.left, got, c.want)
		}
	}
}
