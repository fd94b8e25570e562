package bulkhead

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
)

// Bulkhead bounds how many calls to one dependency run at once. A call
// takes a slot with [Bulkhead.Acquire] (or [Bulkhead.TryAcquire]) and gives
// it back with [Bulkhead.Release]; when every slot is taken, callers wait in
// a bounded first-come, first-served queue, or are refused with [ErrFull].
//
// Taking and giving back a slot while nobody waits is lock-free (one atomic
// compare-and-swap each) and allocates nothing; only callers that must
// queue take a lock. A Bulkhead is safe for simultaneous use by multiple
// goroutines and is meant to be shared by every call to its dependency.
// Create one with [New]; the zero Bulkhead is not usable.
type Bulkhead struct {
	max      int64 // MaxConcurrent
	maxQueue int64
	cfg      Config
	clk      clock.Clock
	full     error // refused at once, shared: refusing allocates nothing
	timedOut error // refused after MaxWait in the queue, shared

	// Padding keeps the read-only fields above off the cache line of
	// state, which every acquire and release writes: under contention the
	// fast path then reads max from a line no other core invalidates.
	_ [64]byte

	// state packs the number of slots held (low 32 bits) and the number
	// of queued callers (high 32 bits), so that both change together. A
	// caller may take a slot without the lock only while nobody is queued,
	// and the queue is non-empty only while every slot is held.
	state atomic.Int64

	_ [56]byte // and the lock's traffic off state's line

	mu    sync.Mutex // guards queue and every change of the queued count
	queue queue
}

const (
	heldMask  = 1<<32 - 1 // state bits counting held slots
	oneQueued = 1 << 32   // one queued caller in state
)

// New returns a bulkhead that lets at most maxConcurrent calls hold a slot
// at once (unless an option sets [Config.MaxConcurrent]), configured by
// opts, applied in order (no queue by default: see [WithMaxQueue]).
//
// New panics if an option is nil or the configuration it builds is invalid
// (see [Config.Validate]; maxConcurrent must be at least 1 unless a Config
// sets it), with a message naming the field and the value, e.g.
// "bulkhead: MaxConcurrent must be between 1 and 2147483647, got 0".
func New(maxConcurrent int, opts ...Option) *Bulkhead {
	cfg := Config{MaxConcurrent: maxConcurrent}
	for _, o := range opts {
		if o == nil {
			panic("bulkhead: New option must not be nil")
		}
		o.apply(&cfg)
	}
	if err := cfg.validate(true); err != nil {
		panic(err.Error())
	}
	b := &Bulkhead{
		max:      int64(cfg.MaxConcurrent),
		maxQueue: int64(cfg.MaxQueue),
		cfg:      cfg,
		clk:      cfg.Clock,
		full:     resilience.Refuse(ErrFull, cfg.Name, -1),
		timedOut: resilience.Refuse(ErrQueueTimeout, cfg.Name, -1),
	}
	if b.clk == nil {
		b.clk = clock.Real()
	}
	return b
}

// Acquire takes a slot, waiting in the queue if every slot is taken and the
// queue has room. It returns nil once the caller holds a slot, which it must
// give back with exactly one call to [Bulkhead.Release] (use defer, so that
// a panic gives it back too).
//
// Acquire looks at ctx first, as golang.org/x/sync/semaphore does: a caller
// whose ctx is already done gets ctx.Err() at once, whether or not a slot
// is free, and takes no slot, joins no queue and is not refused. Otherwise
// it returns, holding no slot:
//   - a *resilience.RefusedError matching [ErrFull] at once when every
//     slot is taken and the queue is full or absent, or matching
//     [ErrQueueTimeout] (and ErrFull) after waiting [Config.MaxWait] in
//     the queue;
//   - ctx.Err() as soon as ctx ends while the caller waits. The caller
//     leaves the queue at once; if a slot reached it as its ctx ended, the
//     slot goes on to the next caller in line, so a caller that was queued
//     never gets a slot after its ctx has ended.
//
// With a free slot and nobody queued, Acquire costs a ctx.Err() call and
// one compare-and-swap.
func (b *Bulkhead) Acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.tryAcquire() {
		return nil
	}
	if b.maxQueue == 0 {
		return b.full
	}
	return b.acquireSlow(ctx)
}

// TryAcquire takes a slot if one is free and nobody is queued for one, and
// reports whether it did. It never waits and never joins the queue. A true
// result must be paired with one call to [Bulkhead.Release].
func (b *Bulkhead) TryAcquire() bool { return b.tryAcquire() }

// tryAcquire is the lock-free fast path: a free slot and an empty queue
// (state < max holds exactly then, as the queued count sits in the high
// bits).
func (b *Bulkhead) tryAcquire() bool {
	for s := b.state.Load(); s < b.max; s = b.state.Load() {
		if b.state.CompareAndSwap(s, s+1) {
			return true
		}
	}
	return false
}

// acquireSlow takes a slot or joins the queue, under the lock.
func (b *Bulkhead) acquireSlow(ctx context.Context) error {
	b.mu.Lock()
	for {
		s := b.state.Load()
		if s < b.max {
			if b.state.CompareAndSwap(s, s+1) {
				b.mu.Unlock()
				return nil
			}
			continue
		}
		if s>>32 >= b.maxQueue {
			b.mu.Unlock()
			return b.full
		}
		// Every slot is held; only lock-free releases may change state
		// now, and they fail this CAS if they do.
		if b.state.CompareAndSwap(s, s+oneQueued) {
			break
		}
	}
	w := &waiter{ready: make(chan struct{})}
	b.queue.pushBack(w)
	b.mu.Unlock()
	return b.wait(ctx, w)
}

// wait blocks a queued caller until it is handed a slot, its ctx ends, or
// MaxWait passes.
func (b *Bulkhead) wait(ctx context.Context, w *waiter) error {
	var timeout <-chan time.Time
	if b.cfg.MaxWait > 0 {
		t := b.clk.NewTimer(b.cfg.MaxWait)
		defer t.Stop()
		timeout = t.C()
	}
	select {
	case <-w.ready:
		return b.granted(ctx)
	case <-ctx.Done():
		err := ctx.Err()
		b.mu.Lock()
		if w.granted {
			// A slot reached us as ctx ended: hand it on.
			b.releaseLocked()
		} else {
			b.leaveLocked(w)
		}
		b.mu.Unlock()
		return err
	case <-timeout:
		b.mu.Lock()
		if w.granted {
			b.mu.Unlock()
			return b.granted(ctx) // the slot came in time after all
		}
		b.leaveLocked(w)
		b.mu.Unlock()
		return b.timedOut
	}
}

// granted ends the wait of a queued caller that was handed a slot: it keeps
// the slot, unless its ctx has ended by now, when the slot goes on to the
// next in line (as golang.org/x/sync/semaphore does).
func (b *Bulkhead) granted(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		b.Release()
		return err
	}
	return nil
}

// leaveLocked takes w out of the queue. b.mu must be held.
func (b *Bulkhead) leaveLocked(w *waiter) {
	b.queue.remove(w)
	b.state.Add(-oneQueued)
}

// Release gives back a slot taken by [Bulkhead.Acquire] or
// [Bulkhead.TryAcquire]. If callers are queued, the slot goes straight to
// the first in line; otherwise it becomes free. Release never waits: it
// takes a short lock only when callers are queued.
//
// Each slot must be released exactly once. Release panics if no slot is
// held, which catches some (not all) double releases.
func (b *Bulkhead) Release() {
	for s := b.state.Load(); s < oneQueued; s = b.state.Load() {
		if s == 0 {
			panic("bulkhead: Release without a held slot")
		}
		if b.state.CompareAndSwap(s, s-1) {
			return
		}
	}
	b.mu.Lock()
	b.releaseLocked()
	b.mu.Unlock()
}

// releaseLocked gives back one held slot: to the first queued caller if
// there is one, else to the pool. b.mu must be held.
func (b *Bulkhead) releaseLocked() {
	for {
		s := b.state.Load()
		if s >= oneQueued {
			// Nobody else changes state while callers are queued and
			// we hold the lock: the slot passes on, held count unchanged.
			w := b.queue.popFront()
			w.granted = true
			close(w.ready)
			b.state.Add(-oneQueued)
			return
		}
		if s == 0 {
			panic("bulkhead: Release without a held slot")
		}
		if b.state.CompareAndSwap(s, s-1) {
			return
		}
	}
}

// InFlight returns the number of slots held now, between 0 and
// MaxConcurrent. It is meant for metrics: it may be stale on return.
func (b *Bulkhead) InFlight() int { return int(b.state.Load() & heldMask) }

// Queued returns the number of callers waiting for a slot now, between 0
// and MaxQueue. It is meant for metrics: it may be stale on return.
func (b *Bulkhead) Queued() int { return int(b.state.Load() >> 32) }
