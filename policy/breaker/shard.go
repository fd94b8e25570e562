package breaker

import (
	"math"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Counters that every call may write are kept in shards, one cache line
// (two, against adjacent-line prefetching) each, so that concurrent callers rarely write the same line. A goroutine
// picks its shard by hashing the address of its own stack: different
// goroutines have different stacks, and one goroutine keeps to one shard,
// which stays in its core's cache.
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
// A shard also counts the refusals of every generation (refused, not
// tagged): the breaker's refusals since it was made, for Stats.
type shard struct {
	n       [2]atomic.Uint64       // tagged counts, indexed by kSuccesses, kRejected
	refused atomic.Uint64          // refusals of all generations
	ring    *successRing           // time-based window only: successes per bucket
	_       [128 - 16 - 8 - 8]byte // two cache lines: adjacent-line prefetch pairs lines
}

// Shard counters.
const (
	kSuccesses = iota
	kRejected
)

const countMask = 1<<32 - 1

func tag(gen uint64) uint64 { return gen << 32 }

// shardFor returns the calling goroutine's shard.
func (b *Breaker) shardFor() *shard {
	var probe byte
	// Only the address is used, never dereferenced. Goroutine stacks are
	// at least 2 KiB and aligned to their size, so the bits from 11 up
	// tell goroutines apart; Fibonacci hashing spreads them over the
	// shards.
	h := uint64(uintptr(unsafe.Pointer(&probe))>>11) * 0x9E3779B97F4A7C15
	return &b.shards[h>>b.shift]
}

// add increments shard counter k for generation gen, unless gen is no
// longer current. locked tells whether the caller holds b.mu.
func (b *Breaker) add(k int, gen uint64, locked bool) {
	b.addSlow(&b.shardFor().n[k], k, gen, locked)
}

// reject counts a refusal in generation gen: in the generation's counts,
// unless gen is no longer current, and in the refusals of all generations.
// locked tells whether the caller holds b.mu.
func (b *Breaker) reject(gen uint64, locked bool) {
	s := b.shardFor()
	s.refused.Add(1)
	b.addSlow(&s.n[kRejected], kRejected, gen, locked)
}

// refusals returns the refusals of all generations.
func (b *Breaker) refusals() uint64 {
	var n uint64
	for i := range b.shards {
		n += b.shards[i].refused.Load()
	}
	return n
}

// addSlow is add for counter c of the caller's shard.
func (b *Breaker) addSlow(c *atomic.Uint64, k int, gen uint64, locked bool) {
	t := tag(gen)
	for {
		w := c.Load()
		nw := t | 1
		if w&^countMask == t {
			if w&countMask == countMask {
				if !b.fold(c, k, gen, w, locked) {
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
	}
}

// fold moves the full count w of counter c into b.carry[k]. It reports
// false if gen is no longer current.
func (b *Breaker) fold(c *atomic.Uint64, k int, gen, w uint64, locked bool) bool {
	if !locked {
		b.mu.Lock()
		defer b.mu.Unlock()
	}
	if wordGen(b.word.Load()) != gen {
		return false
	}
	if c.CompareAndSwap(w, tag(gen)) {
		b.carry[k] += countMask
	}
	return true
}

// sumLocked returns the count of counter k in generation gen.
func (b *Breaker) sumLocked(k int, gen uint64) uint64 {
	t, n := tag(gen), b.carry[k]
	for i := range b.shards {
		if w := b.shards[i].n[k].Load(); w&^countMask == t {
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
	succ := b.sumLocked(kSuccesses, gen)
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
// longer current.
func (r *successRing) add(b *Breaker, gen uint64, num int64) {
	r.mu.Lock()
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
