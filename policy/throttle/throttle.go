package throttle

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/telemetry"
)

// buckets is the number of time buckets of a throttler's window.
const buckets = 16

// Throttler is client-side adaptive throttling for one dependency, as
// the Google SRE book describes it ("Handling Overload", client-side
// throttling): each client remembers, over a sliding window, how many
// requests it sent and how many the dependency accepted, and refuses a
// new request itself, without sending it, with probability
//
//	max(0, (requests − K × accepts) / (requests + 1))
//
// While the dependency accepts what it gets, requests ≤ accepts and
// nothing is refused; once it refuses or fails more than 1 − 1/K of them,
// the client sends about K times what it accepts and drops the rest
// locally, which costs the dependency nothing. The probability is below 1
// however many requests fail, so some always get through, and the
// refusals fade as soon as those succeed.
//
// A request counts when it is sent ([Throttler.Allow] lets it through),
// before the call, so calls that hang count against the dependency; its
// outcome comes with [Permit.Done]. A request the throttler refused
// counts neither as a request nor as an accept: the book counts it as a
// request, and a throttler that does (go-zero counted it as a failure,
// which is the same) keeps its own refusals in the window, so the
// probability stays near 1 after the dependency has recovered and the
// throttler does not let enough requests through to see it
// (go-zero PR 5551, go-kratos issue 2777). A request in flight counts as
// sent but not yet accepted only from the end of its time bucket on, so
// a burst of new calls does not throttle itself before any of them could
// answer.
//
// Allow and Done are lock-free and allocate nothing: an atomic add each to
// a count striped over cache lines, a few loads, no reading of the clock
// (about 9 KiB of counts per throttler). The window's buckets turn on a
// timer of the throttler's clock, which runs while requests come and
// stops after a bucket without any (the next request starts it again).
// A Throttler is safe for simultaneous use by multiple goroutines and is
// meant to be shared by every call to its dependency. Create one with
// [New]; the zero Throttler is not usable.
type Throttler struct {
	k         float64
	name      string
	clk       clock.Clock
	mono      bool // clk is clock.Real(): read time.Since(start)
	random    func() float64
	observer  telemetry.Observer
	width     time.Duration // of a bucket
	start     time.Time     // bucket e spans [start + e·width, start + (e+1)·width)
	throttled error         // the shared refusal

	_ [64]byte // the read-only fields above off the written lines below

	cur      atomic.Int64         // the current bucket's epoch; -1 while idle (no timer armed)
	closed   atomic.Pointer[sums] // the window's buckets before the current one
	rejected atomic.Uint64        // refusals since New
	ring     [buckets]bucket

	mu    sync.Mutex  // serialises turning the buckets
	timer clock.Timer // turns the buckets; nil until first armed
}

// bucket counts the requests of one time bucket. The counts every request
// writes (requests sent, accepts) are striped over cache lines, a stripe
// per goroutine (picked by its stack's address), so that concurrent
// requests rarely write one line; failures, written only when requests
// fail, are one count, which Allow reads.
type bucket struct {
	epoch  atomic.Int64 // which bucket of time it counts
	failed atomic.Int64 // requests sent that failed
	_      [48]byte
	s      [stripes]stripe
}

type stripe struct {
	requests atomic.Int64 // requests sent
	accepts  atomic.Int64 // requests the dependency accepted
	_        [48]byte
}

// stripes is the number of stripes of a bucket.
const stripes = 8

// stripe returns the calling goroutine's stripe of b.
func (b *bucket) stripe() *stripe {
	var probe byte
	// Only the address is used, never dereferenced: goroutine stacks are
	// at least 2 KiB and aligned to their size, so the bits from 11 up
	// tell goroutines apart; Fibonacci hashing spreads them.
	h := uint64(uintptr(unsafe.Pointer(&probe))>>11) * 0x9E3779B97F4A7C15
	return &b.s[h>>(64-3)]
}

// counts returns b's requests and accepts, over its stripes.
func (b *bucket) counts() (requests, accepts int64) {
	for i := range b.s {
		requests += b.s[i].requests.Load()
		accepts += b.s[i].accepts.Load()
	}
	return requests, accepts
}

// reset clears b for epoch e.
func (b *bucket) reset(e int64) {
	b.failed.Store(0)
	for i := range b.s {
		b.s[i].requests.Store(0)
		b.s[i].accepts.Store(0)
	}
	b.epoch.Store(e)
}

// sums are the counts of the window's buckets before the current one, as
// of the turn that made it, and what ended in them since (late):
// requests that ended after their bucket's turn count at once.
type sums struct {
	requests, accepts int64
	lateReq, lateAcc  atomic.Int64
}

// New returns a throttler configured by opts, applied in order (by
// default K 2 over a window of two minutes, the SRE book's values).
//
// New panics if an option is nil or the configuration it builds is
// invalid (see [Config.Validate]), with a message naming the field and
// the value, e.g. "throttle: K must be finite and >= 1, or 0 for the
// default 2, got 0.5".
func New(opts ...Option) *Throttler {
	var c Config
	for _, o := range opts {
		if o == nil {
			panic("throttle: New option must not be nil")
		}
		o.apply(&c)
	}
	if err := c.Validate(); err != nil {
		panic(err.Error())
	}
	if c.K == 0 {
		c.K = defaultK
	}
	if c.Window == 0 {
		c.Window = defaultWindow
	}
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	if c.Random == nil {
		c.Random = rand.Float64
	}
	t := &Throttler{
		k:         c.K,
		name:      c.Name,
		clk:       c.Clock,
		mono:      c.Clock == clock.Real(),
		random:    c.Random,
		observer:  c.Observer,
		width:     c.Window / buckets,
		start:     c.Clock.Now(),
		throttled: resilience.Refuse(ErrThrottled, c.Name, -1),
	}
	t.cur.Store(-1)
	t.closed.Store(&sums{})
	return t
}

// Allow decides whether a request may go to the dependency. It refuses
// it with probability max(0, (requests − K × accepts) / (requests + 1))
// over the window, returning a *resilience.RefusedError matching
// [ErrThrottled]; or it counts the request as sent and returns a [Permit]
// that the caller must end with [Permit.Done] once the call has returned.
func (t *Throttler) Allow() (Permit, error) {
	e := t.cur.Load()
	if e < 0 {
		e = t.wake()
	}
	b := &t.ring[e%buckets]
	if p := t.probability(b); p > 0 && t.random() < p {
		t.rejected.Add(1)
		if o := t.observer; o != nil {
			o.Observe(telemetry.Event{Type: EventRefused, Name: t.name, Err: t.throttled})
		}
		return Permit{}, t.throttled
	}
	b.stripe().requests.Add(1)
	return Permit{t: t, epoch: e}, nil
}

// probability returns the refusal probability now, b being the current
// bucket: its requests count once they are no longer in flight (accepted
// or failed), the earlier buckets' in full.
func (t *Throttler) probability(b *bucket) float64 {
	s := t.closed.Load()
	r := s.requests + s.lateReq.Load()
	a := s.accepts + s.lateAcc.Load()
	failed := b.failed.Load()
	// The current bucket's accepts add 1 to requests and K >= 1 to
	// accepts: while the rest leaves no excess, they cannot make one, and
	// the stripes need not be read.
	if float64(r+failed)-t.k*float64(a) <= 0 {
		return 0
	}
	_, acc := b.counts()
	r += failed + acc
	a += acc
	excess := float64(r) - t.k*float64(a)
	if excess <= 0 {
		return 0
	}
	return excess / float64(r+1)
}

// epochNow returns the bucket of time now.
func (t *Throttler) epochNow() int64 {
	var d time.Duration
	if t.mono {
		d = time.Since(t.start)
	} else {
		d = t.clk.Now().Sub(t.start)
	}
	return int64(max(d, 0) / t.width)
}

// wake starts the buckets turning again after an idle bucket, and
// returns the current epoch.
func (t *Throttler) wake() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.cur.Load(); e >= 0 {
		return e // another request woke it
	}
	e := t.epochNow()
	t.turnLocked(e)
	t.armLocked(e)
	return e
}

// tick turns the buckets at the end of the current one, from the timer.
// After a bucket without requests it stops: the next request wakes it.
func (t *Throttler) tick() {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := t.cur.Load()
	if cur < 0 {
		return
	}
	e := t.epochNow()
	if e <= cur {
		t.armLocked(cur) // early: wait for the end of the bucket
		return
	}
	if r, _ := t.ring[cur%buckets].counts(); r == 0 {
		t.cur.Store(-1) // idle: nothing to count until the next request
		return
	}
	t.turnLocked(e)
	t.armLocked(e)
}

// turnLocked makes e the current epoch: it clears e's bucket and sums
// the window's earlier buckets. t.mu must be held.
func (t *Throttler) turnLocked(e int64) {
	if b := &t.ring[e%buckets]; b.epoch.Load() != e {
		b.reset(e)
	}
	var s sums
	for i := range t.ring {
		if b := &t.ring[i]; b.epoch.Load() > e-buckets && b.epoch.Load() < e {
			r, a := b.counts()
			s.requests += r
			s.accepts += a
		}
	}
	t.closed.Store(&s) // one allocation per bucket of time, never per request
	t.cur.Store(e)
}

// armLocked arms the timer for the end of bucket e. t.mu must be held.
func (t *Throttler) armLocked(e int64) {
	var now time.Duration
	if t.mono {
		now = time.Since(t.start)
	} else {
		now = t.clk.Now().Sub(t.start)
	}
	d := time.Duration(e+1)*t.width - now
	if t.timer == nil {
		t.timer = t.clk.AfterFunc(d, t.tick)
		return
	}
	t.timer.Reset(d)
}

// Stats is a snapshot of a [Throttler], for metrics.
type Stats struct {
	// Requests and Accepts are the requests sent over the window (not
	// those the throttler refused) and those the dependency accepted.
	Requests, Accepts int64
	// Probability is the probability that a request made now is
	// refused, in [0, 1).
	Probability float64
	// Refused counts the requests refused since New. It only grows.
	Refused uint64
}

// Stats returns the throttler's state now. It takes no lock and
// allocates nothing. Its counts are read one after the other, so under
// concurrent requests they may be a request apart.
func (t *Throttler) Stats() Stats {
	e := t.cur.Load()
	st := Stats{Refused: t.rejected.Load()}
	if e < 0 {
		// Idle: the counts the window still holds, read as of now.
		now := t.epochNow()
		for i := range t.ring {
			if b := &t.ring[i]; b.epoch.Load() > now-buckets {
				r, a := b.counts()
				st.Requests += r
				st.Accepts += a
			}
		}
		if excess := float64(st.Requests) - t.k*float64(st.Accepts); excess > 0 {
			st.Probability = excess / float64(st.Requests+1)
		}
		return st
	}
	b := &t.ring[e%buckets]
	s := t.closed.Load()
	r, a := b.counts()
	st.Requests = s.requests + s.lateReq.Load() + r
	st.Accepts = s.accepts + s.lateAcc.Load() + a
	st.Probability = t.probability(b)
	return st
}
