package bulkhead

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Bulkhead bounds how many calls to one dependency run at once. A call
// takes a slot with [Bulkhead.Acquire] (or [Bulkhead.TryAcquire]) and gives
// it back with [Bulkhead.Release]; when every slot is taken, callers wait in
// a bounded first-come, first-served queue, or are refused with [ErrFull].
// [Bulkhead.SetLimit] changes the number of slots while it runs.
//
// Taking and giving back a slot while nobody waits is lock-free (one atomic
// add each) and allocates nothing; only callers that must queue, and the
// release that hands them a slot, take a lock. A Bulkhead is safe for
// simultaneous use by multiple goroutines and is meant to be shared by every
// call to its dependency. Create one with [New]; the zero Bulkhead is not
// usable.
type Bulkhead struct {
	// max is the limit, MaxConcurrent until [Bulkhead.SetLimit] changes
	// it; written only under mu.
	max      atomic.Int64
	maxQueue int64
	cfg      Config
	clk      clock.Clock
	obs      telemetry.Observer // nil: no events
	full     error              // refused at once, shared: refusing allocates nothing
	timedOut error              // refused after MaxWait in the queue, shared

	// Padding keeps the read-mostly fields above off the cache line of
	// state, which every acquire and release writes: under contention the
	// fast path then reads max from a line no other core invalidates.
	_ [64]byte

	// state packs a count of units (low 32 bits) and the number of queued
	// callers (high 32 bits), so that both are read and changed together.
	// A unit is a slot held, or, for an instant, one taken by a caller that
	// found the bulkhead full and is about to give it back: acquiring adds
	// a unit first and looks afterwards (see TryAcquire). The queued count
	// changes only under mu; units change without it.
	//
	// Invariants (state = units | queued<<32, max the limit):
	//   - slots held <= units, and slots held <= max unless SetLimit
	//     lowered max below the slots then held: a unit becomes a held
	//     slot only when units <= max;
	//   - nobody takes a slot while anyone is queued: a caller keeps its
	//     unit only while state <= max, which holds only with queued 0;
	//   - whoever makes "queued > 0 and units < max" true hands the free
	//     slots to the head of the queue under mu (handOnLocked): a
	//     release, a refused caller giving its unit back, a caller turning
	//     its unit into a place in the queue (all subtract from units), and
	//     SetLimit when it raises max. So a free slot never stays free while
	//     callers wait, and every slot given back is counted once.
	state atomic.Int64

	_ [56]byte // and the lock's traffic off state's line

	mu    sync.Mutex // guards queue and every change of the queued count and of max
	queue queue

	// rejected counts the refusals since New; only refusals write it.
	rejected atomic.Uint64
}

const (
	heldMask  = 1<<32 - 1 // state bits counting units
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
		maxQueue: int64(cfg.MaxQueue),
		cfg:      cfg,
		clk:      cfg.Clock,
		obs:      cfg.Observer,
		full:     resilience.Refuse(ErrFull, cfg.Name, -1),
		timedOut: resilience.Refuse(ErrQueueTimeout, cfg.Name, -1),
	}
	b.max.Store(int64(cfg.MaxConcurrent))
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
// one atomic add. See [Bulkhead.TryAcquire] for what "every slot is taken"
// means while other goroutines take and give back slots at that instant.
func (b *Bulkhead) Acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if m := b.max.Load(); b.state.Add(1) <= m { // as TryAcquire
		return nil
	}
	if b.maxQueue == 0 {
		if b.overshot() {
			return nil
		}
		return b.refuse(b.full, 0)
	}
	return b.acquireSlow(ctx)
}

// TryAcquire takes a slot if one is free and nobody is queued for one, and
// reports whether it did. It never waits and never joins the queue. A true
// result must be paired with one call to [Bulkhead.Release].
//
// Under contention the decision is made on one atomic count, which for an
// instant also counts callers that found every slot taken and are giving
// their unit back: a caller is refused only when, as it looked, the slots
// held plus those callers reached the limit. So it is never admitted beyond
// the limit and never passes a queued caller, but when a slot is released
// at the very moment several callers are refused, one of them may be
// refused although a caller arriving an instant later gets that slot (as
// sync.Mutex.TryLock may fail while the mutex is being unlocked). Acquire
// without a queue decides in the same way.
//
// A false result is a refusal: it is counted in [Stats.Refused] and
// reported as a bulkhead.refused event (Err matching [ErrFull]).
func (b *Bulkhead) TryAcquire() bool {
	// The lock-free fast path: add a unit, and keep it if that leaves
	// state <= max, which holds exactly when nobody is queued (the queued
	// count sits in the high bits) and the units, ours included, are at
	// most the limit. Otherwise we overshot.
	//
	// max is read before the add: the decision is then the state at the
	// add against a limit in force at or before it. Read after, a limit
	// raised by SetLimit after a caller joined the queue (which SetLimit
	// hands to that caller) could admit us on a state read before the
	// caller joined: passing it.
	m := b.max.Load()
	if b.state.Add(1) <= m || b.overshot() {
		return true
	}
	b.refuse(b.full, 0)
	return false
}

// refuse counts a refusal, reports it to the observer (outside the lock:
// the caller holds none) and returns err. wait is the time spent in the
// queue.
func (b *Bulkhead) refuse(err error, wait time.Duration) error {
	b.rejected.Add(1)
	if b.obs != nil {
		b.obs.Observe(telemetry.Event{Type: EventRefused, Name: b.cfg.Name, Err: err, Wait: wait})
	}
	return err
}

// admitted reports a queued caller that got a slot after waiting since
// start; there must be an observer.
func (b *Bulkhead) admitted(start time.Time) {
	b.obs.Observe(telemetry.Event{Type: EventQueuedAdmitted, Name: b.cfg.Name, Wait: b.clk.Now().Sub(start)})
}

// overshot ends a fast path whose unit took state above max. It looks
// again: while nobody is queued the unit is kept if a release has brought
// state back to max or below meanwhile (it is then a free slot), else
// given back with a compare-and-swap from a state above max, so that a
// refusal is decided on a full count. When callers are queued the unit is
// never kept (that would pass them): it is given back, and if that leaves
// a free slot, the slot goes to the head of the queue. As in TryAcquire,
// max is read before state, and state is read afresh (not the add's
// result, which SetLimit and callers joining the queue may have
// outdated).
func (b *Bulkhead) overshot() bool {
	for {
		m := b.max.Load()
		s := b.state.Load()
		if s >= oneQueued {
			break
		}
		if s <= m {
			return true
		}
		if b.state.CompareAndSwap(s, s-1) {
			return false
		}
	}
	b.gaveBack(b.state.Add(-1))
	return false
}

// gaveBack follows a subtraction from units that left state s: if callers
// are queued and a slot is free, it hands free slots to the head of the
// queue.
func (b *Bulkhead) gaveBack(s int64) {
	if s >= oneQueued && s&heldMask < b.max.Load() {
		b.mu.Lock()
		b.handOnLocked()
		b.mu.Unlock()
	}
}

// handOnLocked hands a slot to the first queued caller while callers are
// queued and units are below the limit. b.mu must be held: the queued
// count, and max, change only under it, so each queued caller counted is
// in the queue.
func (b *Bulkhead) handOnLocked() {
	for {
		s := b.state.Load()
		if s < oneQueued || s&heldMask >= b.max.Load() {
			return
		}
		// One more unit, one fewer queued: the slot is the head's.
		if b.state.CompareAndSwap(s, s+1-oneQueued) {
			w := b.queue.popFront()
			w.granted = true
			close(w.ready)
		}
	}
}

// acquireSlow ends an Acquire whose fast path overshot, its unit still in
// state, under the lock: it keeps the unit if that has become a free slot
// with nobody queued; or turns it into a place at the end of the queue
// (one compare-and-swap: a unit fewer, a queued caller more), handing on
// the slot that leaves free if there is one (to the head of the queue, as
// a release does); or, with the queue full, gives it back and refuses.
func (b *Bulkhead) acquireSlow(ctx context.Context) error {
	b.mu.Lock()
	var w *waiter
	var s int64
	for {
		s = b.state.Load()
		if s <= b.max.Load() { // nobody queued, and our unit is a free slot
			b.mu.Unlock()
			return nil
		}
		if s>>32 >= b.maxQueue {
			b.gaveBackLocked(b.state.Add(-1))
			b.mu.Unlock()
			return b.refuse(b.full, 0)
		}
		if w == nil {
			w = &waiter{ready: make(chan struct{})}
		}
		if b.state.CompareAndSwap(s, s-1+oneQueued) {
			break
		}
	}
	b.queue.pushBack(w)
	b.gaveBackLocked(s - 1 + oneQueued)
	b.mu.Unlock()
	return b.wait(ctx, w)
}

// wait blocks a queued caller until it is handed a slot, its ctx ends, or
// MaxWait passes.
func (b *Bulkhead) wait(ctx context.Context, w *waiter) (err error) {
	var start time.Time // read only to report waits
	if b.obs != nil {
		start = b.clk.Now()
		defer func() {
			if err == nil {
				b.admitted(start)
			}
		}()
	}
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
			b.gaveBackLocked(b.state.Add(-1))
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
		var waited time.Duration
		if b.obs != nil {
			waited = b.clk.Now().Sub(start)
		}
		return b.refuse(b.timedOut, waited)
	}
}

// gaveBackLocked is gaveBack with b.mu held.
func (b *Bulkhead) gaveBackLocked(s int64) {
	if s >= oneQueued && s&heldMask < b.max.Load() {
		b.handOnLocked()
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
// [Bulkhead.TryAcquire]. If callers are queued and the slots held are
// below the limit, the slot goes straight to the first in line; otherwise
// it becomes free. Release never waits: it takes a short lock only when
// callers are queued.
//
// Each slot must be released exactly once. Release panics if no slot is
// held, which catches some (not all) double releases.
func (b *Bulkhead) Release() {
	// Nobody queued and a unit given back leave 0 <= s < oneQueued-1;
	// anything else (callers queued, or no unit to give back, which
	// borrows from the queued count or makes s negative) is rare.
	if s := b.state.Add(-1); uint64(s) >= oneQueued-1 {
		b.releaseSlow(s)
	}
}

// releaseSlow ends a Release that left state s with callers queued, or
// without a unit to give back.
func (b *Bulkhead) releaseSlow(s int64) {
	if s&heldMask == heldMask { // there was no unit to give back
		b.gaveBack(b.state.Add(1))
		panic("bulkhead: Release without a held slot")
	}
	b.gaveBack(s)
}

// SetLimit sets the number of calls that may hold a slot at once, from now
// on, to n: it changes [Config.MaxConcurrent] while the bulkhead runs, for
// every caller. Raising it hands the new slots at once to callers waiting
// in the queue, first in line first. Lowering it revokes nothing: calls
// holding a slot keep it until they release it, and until the slots held
// fall below n, a slot given back goes to nobody (no queued caller, no
// newcomer); then queued callers are admitted in order as slots free. The
// queue, MaxQueue and MaxWait are unchanged. An Acquire that runs at the
// same instant as SetLimit may be decided under the old limit.
//
// SetLimit is safe to call at any time, from any goroutine; it takes the
// bulkhead's lock briefly. It panics if n is not between 1 and 1<<31 - 1,
// with a message naming the value, as New does for MaxConcurrent.
func (b *Bulkhead) SetLimit(n int) {
	if n < 1 || n > maxCount {
		panic(fmt.Sprintf("bulkhead: SetLimit n must be between 1 and %d, got %d", maxCount, n))
	}
	b.mu.Lock()
	b.max.Store(int64(n))
	b.handOnLocked()
	b.mu.Unlock()
}

// Limit returns the number of calls that may hold a slot at once:
// MaxConcurrent, or what [Bulkhead.SetLimit] last set.
func (b *Bulkhead) Limit() int { return int(b.max.Load()) }

// InFlight returns the number of slots held now, between 0 and the limit
// (or above it, after [Bulkhead.SetLimit] lowered the limit, until enough
// slots come back). It is meant for metrics: it may be stale on return, and
// under contention it counts, for an instant, callers being refused (see
// [Bulkhead.TryAcquire]), so it may read up to one more per such caller.
func (b *Bulkhead) InFlight() int { return int(b.state.Load() & heldMask) }

// Queued returns the number of callers waiting for a slot now, between 0
// and MaxQueue. It is meant for metrics: it may be stale on return.
func (b *Bulkhead) Queued() int { return int(max(b.state.Load(), 0) >> 32) }
