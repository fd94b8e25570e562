package breaker

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Counters that every call may write are kept in shards. A breaker starts
// with one, s0, inside the Breaker itself, so that a breaker at rest is
// small (a few hundred bytes whatever GOMAXPROCS is). When calls from
// several goroutines are measured to collide on it (see collided), the
// breaker grows a set of shards, 16 to 128 of them, each on its own two
// cache lines (against adjacent-line prefetching), so that concurrent
// callers rarely write the same line. A goroutine picks its shard in the
// set by hashing the address of its own stack: different goroutines have
// different stacks, and one goroutine keeps to one shard, which stays in
// its core's cache.
//
// The set is allocated once and published with one atomic store; s0 stays
// a shard like the others. A writer that loaded "no set" just before the
// switch still writes s0, and readers always sum s0 and the set, so no
// count is lost at the switch and none is counted twice.
//
// A shard counter is a tagged word: the low 32 bits of the generation it
// counts for in the high half, the count in the low half. Incrementing it
// is a compare-and-swap that starts the count over when the tag is not the
// caller's generation, and gives up when the caller's generation is no
// longer current. So transitions need not touch the shards, and a report
// that loses a race with a transition can never be counted in the new
// generation (its compare-and-swap fails and its retry sees the new
// generation). Readers count only words tagged with the current
// generation. A count about to overflow is folded into Breaker.carry under
// the lock.
//
// Refusals are counted the same way, in a tagged word per shard (rej),
// with one difference: every refusal must also count in the breaker's
// lifetime total (Stats.Refused), so no count is ever dropped. The count
// of a word, whatever its tag, is part of the total; a word is retagged
// for a new generation only under the breaker's lock, which moves its old
// count into Breaker.refusedAcc in the same step; and a refusal of a
// generation that has ended, finding a word of a later one, counts in
// refusedAcc alone, under the lock. So a refusal is one compare-and-swap,
// the lifetime total (refusedAcc plus every word's count, read under the
// lock) is exact, and a generation's Refused (its words) never holds a
// refusal of another.
type shard struct {
	succ atomic.Uint64 // tagged count of successes
	rej  atomic.Uint64 // tagged count of refusals
	ring *successRing  // time-based window only: successes per bucket
}

// paddedShard is a shard of a grown set: two cache lines, since
// adjacent-line prefetch pairs lines.
type paddedShard struct {
	shard
	_ [128 - unsafe.Sizeof(shard{})]byte
}

// shardSet is where calls pick their shard: n shards, paddedShard apart,
// from first; mask is (n-1)<<7, which picks a shard's byte offset from a
// hash (see shardFor). The set of a breaker at rest is b.one: s0 alone,
// with mask 0. A grown set holds a []paddedShard of its own; s0 is not in
// it.
type shardSet struct {
	first unsafe.Pointer // *shard
	mask  uint64
}

// grownShards returns the shards of a grown set g; nil for b.one.
func (b *Breaker) grownShards(g *shardSet) []paddedShard {
	if g == &b.one {
		return nil
	}
	return unsafe.Slice((*paddedShard)(g.first), g.mask>>7+1)
}

const countMask = 1<<32 - 1

func tag(gen uint64) uint64 { return gen << 32 }

// shardFor returns the calling goroutine's shard: s0 until the breaker has
// grown its set.
func (b *Breaker) shardFor() *shard {
	var probe byte
	// Only the address is used, never dereferenced. Goroutine stacks are
	// at least 2 KiB and aligned to their size, so the bits from 11 up
	// tell goroutines apart; Fibonacci hashing spreads them over the
	// shards: h>>50&mask is the hash's top bits, from bit 57, as a byte
	// offset in steps of a paddedShard (1<<7 bytes), at most 127 of them.
	h := uint64(uintptr(unsafe.Pointer(&probe))>>11) * 0x9E3779B97F4A7C15
	g := (*shardSet)(atomic.LoadPointer(&b.set))
	return (*shard)(unsafe.Add(g.first, h>>50&g.mask))
}

// isGrown reports whether b has grown its set.
func (b *Breaker) isGrown() bool { return (*shardSet)(atomic.LoadPointer(&b.set)) != &b.one }

// shards yields each shard: s0, then the grown set's, if any.
func (b *Breaker) shards(yield func(*shard) bool) {
	if !yield(&b.s0) {
		return
	}
	for i, ss := 0, b.grownShards((*shardSet)(atomic.LoadPointer(&b.set))); i < len(ss); i++ {
		if !yield(&ss[i].shard) {
			return
		}
	}
}

// Growth. A write to s0 that finds another goroutine's write in its way —
// a failed compare-and-swap on a counter, a ring lock already held — is a
// collision. Collisions are counted in epochs: an epoch starts at the
// first collision after the previous one ended and lasts growWithin; the
// growAfter-th collision within one epoch grows the set. So a breaker
// grows when its callers collide at least growAfter/growWithin (640) times
// a second. Collisions need two writes within a few tens of nanoseconds
// of each other, so their rate goes with the square of the call rate:
// 640 a second is a breaker taking on the order of 100 000 calls a second
// from several cores, for which the set's 2 to 16 KiB is well spent; a
// breaker of a few thousand calls a second collides a few times a second
// at most and never grows. Counting costs nothing on the closed path: it
// is done only after a collision, which already sent the call down the
// slow path.
const (
	growAfter  = 64
	growWithin = 100 * time.Millisecond
)

// collided records a collision on s0, and grows the set at the
// growAfter-th of an epoch.
func (b *Breaker) collided() {
	if b.isGrown() {
		return
	}
	if b.noteCollision(b.now()) {
		b.grow()
	}
}

// noteCollision counts a collision at time now (ns, the breaker's time)
// and reports whether it is the growAfter-th of its epoch. b.contention
// holds the epoch's start (µs, plus one so that 0 means "no epoch") in its
// high 48 bits and its collisions in the low 16.
func (b *Breaker) noteCollision(now int64) bool {
	at := uint64(max(now, 0)/int64(time.Microsecond)) + 1
	for {
		old := b.contention.Load()
		start, n := old>>16, old&0xffff
		nw := at<<16 | 1 // a new epoch
		switch {
		case n >= growAfter:
			return false // already reached: the set is being grown
		case old != 0 && at >= start && at-start < uint64(growWithin/time.Microsecond):
			nw = old + 1
		}
		if b.contention.CompareAndSwap(old, nw) {
			return nw&0xffff >= growAfter
		}
	}
}

// grow allocates the set of shards, a power of two, at least 4 per P,
// between 16 and 128, and publishes it, unless another goroutine did.
func (b *Breaker) grow() {
	n := 16
	for n < 4*runtime.GOMAXPROCS(0) && n < 128 {
		n *= 2
	}
	ss := make([]paddedShard, n)
	if b.win != nil && b.win.tw.buckets > 0 {
		for i := range ss {
			ss[i].ring = newSuccessRing(b.win.tw.buckets)
		}
	}
	atomic.CompareAndSwapPointer(&b.set, unsafe.Pointer(&b.one), unsafe.Pointer(&shardSet{first: unsafe.Pointer(&ss[0]), mask: uint64(n-1) << 7}))
}

// addSuccess counts a success for generation gen, unless gen is no longer
// current. locked tells whether the caller holds b.mu.
func (b *Breaker) addSuccess(gen uint64, locked bool) {
	b.addSlow(&b.shardFor().succ, gen, locked)
}

// reject counts a refusal of generation gen: a compare-and-swap on the
// caller's shard in the common case (the shard counts for gen and is not
// full), so that collisions on s0 are seen (parallel refusals grow the set
// too). locked tells whether the caller holds b.mu.
func (b *Breaker) reject(gen uint64, locked bool) {
	c := &b.shardFor().rej
	for {
		x := c.Load()
		if x-tag(gen) >= countMask { // another generation's word, or full
			b.rejectSlow(c, gen, locked)
			return
		}
		if c.CompareAndSwap(x, x+1) {
			return
		}
		b.collided()
	}
}

// rejectSlow counts a refusal of generation gen that found refusal word c
// tagged for another generation, or full: under the lock, it retags c for
// gen (its old count going into refusedAcc), or, if gen has ended, counts
// the refusal in refusedAcc alone.
func (b *Breaker) rejectSlow(c *atomic.Uint64, gen uint64, locked bool) {
	if !locked {
		b.mu.Lock()
		defer b.mu.Unlock()
	}
	for {
		x := c.Load()
		switch {
		case wordGen(b.word.Load()) != gen:
			b.refusedAcc++ // a generation that has ended: lifetime only
			return
		case x-tag(gen) < countMask: // retagged meanwhile, before we took the lock
			if c.CompareAndSwap(x, x+1) {
				return
			}
		case c.CompareAndSwap(x, tag(gen)|1):
			b.refusedAcc += x & countMask
			return
		}
	}
}

// refusalsLocked returns the refusals of all generations.
func (b *Breaker) refusalsLocked() uint64 {
	n := b.refusedAcc + b.s0.rej.Load()&countMask
	ss := b.grownShards((*shardSet)(atomic.LoadPointer(&b.set)))
	for i := range ss {
		n += ss[i].rej.Load() & countMask
	}
	return n
}

// rejectedLocked returns the refusals of generation gen.
func (b *Breaker) rejectedLocked(gen uint64) uint64 {
	t, n := tag(gen), uint64(0)
	if w := b.s0.rej.Load(); w&^countMask == t {
		n += w & countMask
	}
	ss := b.grownShards((*shardSet)(atomic.LoadPointer(&b.set)))
	for i := range ss {
		if w := ss[i].rej.Load(); w&^countMask == t {
			n += w & countMask
		}
	}
	return n
}

// addSlow is addSuccess for the success counter c of the caller's shard.
func (b *Breaker) addSlow(c *atomic.Uint64, gen uint64, locked bool) {
	t := tag(gen)
	for {
		w := c.Load()
		nw := t | 1
		if w&^countMask == t {
			if w&countMask == countMask {
				if !b.fold(c, gen, w, locked) {
					return
				}
				continue
			}
			nw = w + 1
		} else if wordGen(b.word.Load()) != gen {
			return
		}
		if c.CompareAndSwap(w, nw) {
			return
		}
		b.collided()
	}
}

// fold moves the full count w of counter c into b.carry. It reports false
// if gen is no longer current.
func (b *Breaker) fold(c *atomic.Uint64, gen, w uint64, locked bool) bool {
	if !locked {
		b.mu.Lock()
		defer b.mu.Unlock()
	}
	if wordGen(b.word.Load()) != gen {
		return false
	}
	if c.CompareAndSwap(w, tag(gen)) {
		b.carry += countMask
	}
	return true
}

// successesLocked returns the successes of generation gen.
func (b *Breaker) successesLocked(gen uint64) uint64 {
	t, n := tag(gen), b.carry
	if w := b.s0.succ.Load(); w&^countMask == t {
		n += w & countMask
	}
	ss := b.grownShards((*shardSet)(atomic.LoadPointer(&b.set)))
	for i := range ss {
		if w := ss[i].succ.Load(); w&^countMask == t {
			n += w & countMask
		}
	}
	return n
}

// The consecutive failures are counted by failures, under the lock, and
// cleared by successes without the lock and without a write: a success
// only increments its shard counter, and the streak counts only while the
// successes of the generation are still what they were at its last failure
// (b.succAtFail).

// failLocked counts a failure of generation gen, the current one, and
// returns the consecutive failures.
func (b *Breaker) failLocked(gen uint64) uint64 {
	succ := b.successesLocked(gen)
	b.streak = b.streakLocked(succ)
	if b.streak != math.MaxUint64 {
		b.streak++
	}
	b.fails++
	b.succAtFail = succ
	return b.streak
}

// streakLocked returns the consecutive failures of the current generation,
// whose successes number succ.
func (b *Breaker) streakLocked(succ uint64) uint64 {
	if succ != b.succAtFail {
		return 0 // a success since the last failure
	}
	return b.streak
}

// successRing counts one shard's successes per bucket of a time-based
// window. Its slots belong to generation gen; a writer or reader of a
// newer generation starts them over.
type successRing struct {
	mu    sync.Mutex
	gen   uint64
	slots []successSlot
}

type successSlot struct {
	num int64 // bucket number
	n   uint64
}

func newSuccessRing(buckets int64) *successRing {
	// Four spare slots (a cache line) at the end keep the slots of
	// different rings off each other's cache lines.
	return &successRing{slots: make([]successSlot, buckets, buckets+4)}
}

// add counts a success of generation gen in bucket num, unless gen is no
// longer current. A lock of s0's ring found held is a collision.
func (r *successRing) add(b *Breaker, gen uint64, num int64) {
	if !r.mu.TryLock() {
		if r == b.s0.ring {
			b.collided()
		}
		r.mu.Lock()
	}
	if r.gen != gen {
		if wordGen(b.word.Load()) != gen {
			r.mu.Unlock()
			return
		}
		clear(r.slots)
		r.gen = gen
	}
	s := &r.slots[mod(num, int64(len(r.slots)))]
	if s.num != num {
		*s = successSlot{num: num}
	}
	s.n++
	r.mu.Unlock()
}

// sum returns the successes of generation gen in the window that ends with
// bucket cur.
func (r *successRing) sum(gen uint64, cur int64) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gen != gen {
		return 0
	}
	var n uint64
	for _, s := range r.slots {
		if inWindow(s.num, cur, int64(len(r.slots))) {
			n += s.n
		}
	}
	return n
}
