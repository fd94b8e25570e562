// Package fleetbudget is the algorithm of a retry budget shared by a
// fleet of instances through a store of counts: Redis in resilienceredis
// (RetryBudget), memory in the simulator's tests ([MemStore]).
//
// Each instance counts its executions (Deposit: one atomic add) and the
// retries it grants, and sends the counts to the store in batches
// ([Budget.Flush]); the store adds them to the fleet's sliding window and
// answers with the fleet's totals over it. Between two flushes the
// instance decides each retry (Withdraw) from the last totals plus its own
// counts since, without asking the store:
//
//   - the floor: a retry is granted while the instance's own retries over
//     the window are fewer than Reserve (MinPerSecond × Window): the
//     minimum each instance may always make;
//   - the ratio: else a retry is granted while the instance's retries not
//     yet in the store's totals, plus one, are at most its headroom plus
//     Ratio times its executions not yet in the totals. The headroom is
//     the instance's share of the fleet's: share × (Ratio × fleet calls −
//     fleet retries), the share being the instance's own executions over
//     the window divided by the fleet's. The shares add up to one, so the
//     instances together spend the fleet's headroom once, not once each.
//
// Retries granted by the floor count as any other: the floor is a minimum,
// not an addition. So, while every instance flushes, fleet retries stay
// within Ratio × fleet executions, or each instance's floor where that is
// more, up to the drift of instances' views taken at different times (at
// most one flush interval apart).
package fleetbudget

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// Buckets is the number of buckets of the sliding windows, the instance's
// and the store's: a window slides in steps of Window/Buckets.
const Buckets = 10

// Config is a Budget's configuration, resolved: no defaults.
type Config struct {
	// Ratio is the fleet's retries allowed per execution over the window;
	// 0 means none (only the floor).
	Ratio float64
	// Reserve is the instance's own retries always allowed over the
	// window (MinPerSecond × Window); 0 means no floor.
	Reserve float64
	// Window is the length of the instance's sliding window, > 0.
	Window time.Duration
	// Clock is the instance's source of time for its window; nil means
	// clock.Real().
	Clock clock.Clock
}

// Store adds an instance's counts to the fleet's window and returns the
// fleet's totals over it, these counts included. It must be safe for
// simultaneous use.
type Store interface {
	Add(ctx context.Context, calls, retries int64) (fleetCalls, fleetRetries int64, err error)
}

// Budget is one instance's side of a fleet's retry budget. It is safe for
// simultaneous use; Deposit is lock-free and does not allocate, Withdraw
// takes a short lock.
type Budget struct {
	ratio, reserve float64
	width          time.Duration
	clock          clock.Clock
	start          time.Time

	pending atomic.Int64 // executions not yet taken by a flush

	mu            sync.Mutex
	pendRetries   int64   // retries granted, not yet taken by a flush
	flightCalls   int64   // taken by a flush not yet answered
	flightRetries int64   //
	headroom      float64 // the instance's share of the fleet's headroom, at the last answer
	ring          [Buckets]bucket
}

// bucket is the instance's own counts of one Window/Buckets of time.
type bucket struct {
	epoch          int64
	calls, retries int64
}

// New returns an instance's budget configured by c, with no view of the
// fleet yet: until its first answer it grants the floor and Ratio times
// its own executions.
func New(c Config) *Budget {
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	w := c.Window / Buckets
	if c.Window%Buckets != 0 {
		w++
	}
	return &Budget{ratio: c.Ratio, reserve: c.Reserve, width: max(w, 1), clock: c.Clock, start: c.Clock.Now()}
}

// Deposit counts one execution.
func (b *Budget) Deposit() { b.pending.Add(1) }

// slotLocked returns the bucket of the current time slot, reset if it held
// an older one, and that slot's epoch.
func (b *Budget) slotLocked() (*bucket, int64) {
	e := int64(max(b.clock.Now().Sub(b.start), 0) / b.width)
	s := &b.ring[e%Buckets]
	if s.epoch < e {
		*s = bucket{epoch: e}
	}
	return s, e
}

// ownLocked returns the instance's own calls and retries over the window
// ending in epoch e.
func (b *Budget) ownLocked(e int64) (calls, retries int64) {
	for i := range b.ring {
		if s := &b.ring[i]; s.epoch > e-Buckets {
			calls += s.calls
			retries += s.retries
		}
	}
	return calls, retries
}

// Withdraw reports whether one more retry is allowed now, and counts it if
// so; see the package doc for the rule.
func (b *Budget) Withdraw() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur, e := b.slotLocked()
	_, own := b.ownLocked(e)
	ok := float64(own+1) <= b.reserve
	if !ok && b.ratio > 0 {
		calls := b.pending.Load() + b.flightCalls
		retries := b.pendRetries + b.flightRetries
		ok = float64(retries+1) <= b.headroom+b.ratio*float64(calls)
	}
	if ok {
		b.pendRetries++
		cur.retries++
	}
	return ok
}

// Take takes the counts not yet sent, for a flush: the caller sends them to
// the store, then calls Settle with its answer or Drop if it failed. A
// flush at a time: Take again only after Settle or Drop.
func (b *Budget) Take() (calls, retries int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	calls, retries = b.pending.Swap(0), b.pendRetries
	b.pendRetries = 0
	b.flightCalls += calls
	b.flightRetries += retries
	cur, _ := b.slotLocked()
	cur.calls += calls
	return calls, retries
}

// Settle takes the store's answer to the last Take: the fleet's totals over
// its window, that Take's counts included.
func (b *Budget) Settle(fleetCalls, fleetRetries int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flightCalls, b.flightRetries = 0, 0
	_, e := b.slotLocked()
	own, _ := b.ownLocked(e)
	b.headroom = 0
	if fleetCalls > 0 {
		share := math.Min(float64(own)/float64(fleetCalls), 1)
		b.headroom = share * (b.ratio*float64(fleetCalls) - float64(fleetRetries))
	}
}

// Drop forgets the counts of the last Take: the store did not take them.
func (b *Budget) Drop() {
	b.mu.Lock()
	b.flightCalls, b.flightRetries = 0, 0
	b.mu.Unlock()
}

// Flush sends the counts not yet sent to s and takes its answer (Take, then
// Settle or Drop); it returns s's error.
func (b *Budget) Flush(ctx context.Context, s Store) error {
	calls, retries := b.Take()
	fc, fr, err := s.Add(ctx, calls, retries)
	if err != nil {
		b.Drop()
		return err
	}
	b.Settle(fc, fr)
	return nil
}

// Headroom returns the instance's share of the fleet's headroom at the
// last answer, in retries: negative when the fleet is over its ratio.
func (b *Budget) Headroom() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.headroom
}

// MemStore is a Store in memory, for fleets within one process (the
// simulator's): the fleet's counts over a sliding window of Window on
// Clock, in Buckets buckets, as resilienceredis keeps them in Redis.
type MemStore struct {
	width time.Duration
	clock clock.Clock
	start time.Time

	mu   sync.Mutex
	ring [Buckets]bucket
}

// NewMemStore returns an empty MemStore of a window of length window (> 0)
// on clk (nil: clock.Real()).
func NewMemStore(window time.Duration, clk clock.Clock) *MemStore {
	if clk == nil {
		clk = clock.Real()
	}
	w := window / Buckets
	if window%Buckets != 0 {
		w++
	}
	return &MemStore{width: max(w, 1), clock: clk, start: clk.Now()}
}

// Add implements Store.
func (m *MemStore) Add(_ context.Context, calls, retries int64) (int64, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := int64(max(m.clock.Now().Sub(m.start), 0) / m.width)
	s := &m.ring[e%Buckets]
	if s.epoch < e {
		*s = bucket{epoch: e}
	}
	s.calls += calls
	s.retries += retries
	var c, r int64
	for i := range m.ring {
		if s := &m.ring[i]; s.epoch > e-Buckets {
			c += s.calls
			r += s.retries
		}
	}
	return c, r, nil
}
