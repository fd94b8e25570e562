package adaptive

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Limiter is an adaptive concurrency limit for one dependency: it admits
// a call while fewer calls are in flight than its limit, and it moves the
// limit between Min and Max from what the calls measure, so that the
// dependency gets as many calls at once as it can serve without queueing
// them. Share one Limiter per dependency (or, on a server, per resource
// the handlers contend for), whatever the calls' result types.
//
// A call takes a [Permit] with [Limiter.Acquire] and reports its end with
// [Permit.Done]; [Policy] does both around a resilience.Policy[T]'s op. At
// the end of each sampling window ([Config.Window]) the limiter hands
// what the window measured (the mean latency of its successful calls,
// the failures, the most calls in flight) to its [Algorithm], which sets
// the next limit, within the guardrails described there.
//
// Admitting a call and ending it are lock-free and allocate nothing while
// nobody is queued: a compare-and-swap on one word that holds the limit,
// the calls in flight and the queue, a few atomic adds, and two readings
// of the monotonic clock. When calls come fast (more than 256 in a
// window), only a sample of them is timed: all of each window's first
// 256, then one in k, k set from the window's rate so that it times about
// 512; the others read no clock. Ending a window takes a lock, once per
// window.
// A Limiter is safe for simultaneous use by multiple goroutines. Create
// one with [New]; the zero Limiter is not usable.
type Limiter struct {
	cfg        Config // resolved
	alg        Algorithm
	clk        clock.Clock
	mono       bool      // clk is clock.Real(): read time.Since(base)
	base       time.Time // the origin of the limiter's times
	normal     float64   // 1 − Reserve: a Normal call's share of the limit
	low        float64   // (1 − Reserve)²: a Low call's
	reserve    bool      // Reserve > 0: read the priority on the fast path
	maxQueue   uint64
	window     int64 // Config.Window in ns
	maxWindow  int64 // a window ends after this whatever it saw
	minSamples int64
	maxLatency int64 // 0: none
	full       error // shared refusals: refusing allocates nothing
	timedOut   error

	// Padding keeps the read-only fields above off the cache line of
	// state, which every admission and end writes.
	_ [64]byte

	// state packs the calls in flight (bits 0-20), the queued callers
	// (bits 21-41) and the limit (bits 42-62), so that admission compares
	// and changes them together.
	state atomic.Uint64

	// The current window, added to without a lock.
	winEnd      atomic.Int64 // the window may end from then on (ns since base)
	winStart    atomic.Int64
	winAdmitted atomic.Int64 // calls admitted
	every       atomic.Int64 // after the first sampleFirst, one admission in every is timed
	winOK       atomic.Int64 // successful calls ended
	winCount    atomic.Int64 // timed successful calls ended
	winSum      atomic.Int64 // their latencies, ns
	winDrops    atomic.Int64 // failed calls ended
	winIgnored  atomic.Int64 // calls ended that are not counted (see Permit.Done)
	winRejected atomic.Int64
	winMaxIn    atomic.Int64
	rejected    atomic.Uint64 // every refusal since New
	latency     atomic.Int64  // the last window's, for Stats
	baseline    atomic.Int64

	// The limiter's time with a clock other than clock.Real(): see now.
	last   atomic.Int64 // the latest time read
	skew   atomic.Int64 // added to the clock's readings: the steps back so far
	stepMu sync.Mutex   // serialises the changes of skew

	winMu     sync.Mutex // serialises the ends of windows
	limit     float64    // the algorithm's limit; guarded by winMu
	floor     floor      // guarded by winMu
	recent    recent     // guarded by winMu
	startHeld int64      // calls in flight as the window began; guarded by winMu
	smoothed  float64    // the windows' latency averaged over about baselineSmoothing, ns; 0: none yet; guarded by winMu

	mu     sync.Mutex // guards the queues and every change of the queued count
	queues [3]queue   // by Priority.rank: critical, normal, low
}

const (
	fieldBits   = 21
	fieldMask   = 1<<fieldBits - 1
	queuedShift = fieldBits
	limitShift  = 2 * fieldBits
	oneQueued   = 1 << queuedShift
)

func heldOf(s uint64) uint64   { return s & fieldMask }
func queuedOf(s uint64) uint64 { return s >> queuedShift & fieldMask }
func limitOf(s uint64) uint64  { return s >> limitShift }

// New returns a limiter configured by opts, applied in order: by default
// a [Gradient2] limit between 1 and 1000 that starts at 20, a window of
// 1s, no queue (see [Config] for every default).
//
// New panics if an option is nil or the configuration it builds is
// invalid (see [Config.Validate]), with a message naming the field and
// the value, e.g. "adaptive: Max must be >= Min, got Max 5 and Min 10".
func New(opts ...Option) *Limiter {
	var c Config
	for _, o := range opts {
		if o == nil {
			panic("adaptive: New option must not be nil")
		}
		o.apply(&c)
	}
	if err := c.Validate(); err != nil {
		panic(err.Error())
	}
	c = c.resolved()
	l := &Limiter{
		cfg:        c,
		alg:        c.Algorithm,
		clk:        c.Clock,
		mono:       c.Clock == clock.Real(),
		base:       c.Clock.Now(),
		normal:     1 - c.Reserve,
		low:        (1 - c.Reserve) * (1 - c.Reserve),
		reserve:    c.Reserve > 0,
		maxQueue:   uint64(c.MaxQueue),
		window:     int64(c.Window),
		maxWindow:  max(int64(c.Window)*maxWindowFactor, int64(minMaxWindow)),
		minSamples: int64(c.MinSamples),
		maxLatency: int64(c.MaxLatency),
		full:       resilience.Refuse(ErrFull, c.Name, -1),
		timedOut:   resilience.Refuse(ErrQueueTimeout, c.Name, -1),
		limit:      float64(c.Initial),
	}
	l.recent.span = confirmTime * max(int64(c.Window), int64(confirmUnit))
	if c.BaselineMemory > 0 {
		l.floor.width = int64(c.BaselineMemory) / floorSlots
		l.floor.width = max(l.floor.width, 1)
	}
	l.state.Store(uint64(c.Initial) << limitShift)
	l.winEnd.Store(l.window)
	l.every.Store(1)
	return l
}

// Latencies are measured on a sample of the calls when they come fast:
// every one of a window's first sampleFirst admissions, then one in
// `every`: the window's admissions over sampleFirst, projected from its
// rate at each timed admission (from the last window's at its start), so
// that a window times about 2 × sampleFirst calls. The others read no
// clock.
const sampleFirst = 256

// now returns the limiter's time: nanoseconds since New. It never runs
// backwards: clock.Real() is read through the monotonic clock, and a
// clock of another kind that is stepped back (a fake clock Set back, a
// wall clock corrected) is read as standing still at the step and then
// going on as the clock does, from there (see stepped).
func (l *Limiter) now() int64 {
	if l.mono {
		return int64(time.Since(l.base))
	}
	skew := l.skew.Load() // before the clock: see stepped
	t := int64(l.clk.Now().Sub(l.base)) + skew
	last := l.last.Load()
	if t < last {
		return l.stepped()
	}
	for t > last && !l.last.CompareAndSwap(last, t) {
		last = l.last.Load()
	}
	return t
}

// stepped returns the limiter's time after its clock was stepped back
// (read earlier than the latest time the limiter has seen): it adds the
// step to skew, so that the limiter's time goes on from the latest it
// has seen. The readers of now load skew before they read the clock, so
// a reading taken before the step is never added a skew that makes up
// for it.
func (l *Limiter) stepped() int64 {
	l.stepMu.Lock()
	defer l.stepMu.Unlock()
	skew := l.skew.Load()
	t := int64(l.clk.Now().Sub(l.base)) + skew
	if last := l.last.Load(); t < last {
		l.skew.Store(skew + last - t)
		t = last
	}
	return t
}

// ceiling returns how many calls may be in flight when a call of priority
// p is admitted, under the limit.
func (l *Limiter) ceiling(limit uint64, p Priority) uint64 {
	switch {
	case !l.reserve || p == Critical:
		return limit
	case p == Normal:
		return uint64(math.Ceil(float64(limit) * l.normal))
	}
	return uint64(math.Ceil(float64(limit) * l.low))
}

// Acquire admits a call, or refuses it. Admitted, it returns a Permit,
// which the caller must end with exactly one call to [Permit.Done] once
// the call to the dependency has returned (use defer, so that a panic
// ends it too): its latency and outcome are what the limit learns from.
//
// A call of priority p ([ContextWithPriority]; [Normal] by default) is
// admitted at once while fewer calls are in flight than the limit allows
// p (the whole limit, less a reserve for higher priorities if
// [Config.Reserve] is set) and no caller of priority p or higher is
// queued. Otherwise, with a queue ([Config.MaxQueue]), it waits in line:
// callers of higher priority first, then by arrival; when the queue is
// full, a caller takes the place of the newest one of the lowest priority
// below its own, which is refused. It returns, holding no permit:
//   - ctx.Err() at once if ctx is already done (looked at first, as
//     golang.org/x/sync/semaphore does: such a caller is neither admitted
//     nor refused), or as soon as ctx ends while it waits;
//   - a *resilience.RefusedError matching [ErrFull] when it is over the
//     limit and finds no room in the queue (or none at all), or loses its
//     place to a caller of higher priority; matching [ErrQueueTimeout]
//     (and ErrFull) after [Config.MaxWait] in the queue.
//
// A lowered limit does not end calls in flight: until enough of them end,
// more calls may be in flight than the limit, and no call is admitted.
func (l *Limiter) Acquire(ctx context.Context) (Permit, error) {
	if err := ctx.Err(); err != nil {
		return Permit{}, err
	}
	p := Normal
	if l.reserve {
		p = priorityOf(ctx)
	}
	for s := l.state.Load(); queuedOf(s) == 0 && heldOf(s) < l.ceiling(limitOf(s), p); s = l.state.Load() {
		if l.state.CompareAndSwap(s, s+1) {
			return l.admitted(ctx, heldOf(s)+1), nil
		}
	}
	if l.maxQueue == 0 {
		return Permit{}, l.refuse(l.full, l.now())
	}
	if !l.reserve {
		p = priorityOf(ctx)
	}
	return l.acquireSlow(ctx, p)
}

// admitted returns the permit of a call of ctx admitted with held calls
// in flight, its own included: timed (its start on the clock) or, when the
// calls come fast, maybe not (start -1).
func (l *Limiter) admitted(ctx context.Context, held uint64) Permit {
	h := int64(held)
	for m := l.winMaxIn.Load(); h > m && !l.winMaxIn.CompareAndSwap(m, h); m = l.winMaxIn.Load() {
	}
	n := l.winAdmitted.Add(1)
	if n > sampleFirst && n%l.every.Load() != 0 {
		return Permit{l: l, ctx: ctx, start: -1}
	}
	now := l.now()
	if el := now - l.winStart.Load(); n > sampleFirst && el > 0 {
		// The window's traffic so far, projected over a whole window.
		l.every.Store(max(int64(float64(n)*float64(l.window)/float64(el)/sampleFirst), 1))
	}
	return Permit{l: l, ctx: ctx, start: now}
}

// refuse counts a refusal at now and returns err.
func (l *Limiter) refuse(err error, now int64) error {
	l.rejected.Add(1)
	l.winRejected.Add(1)
	l.maybeEnd(now)
	if o := l.cfg.Observer; o != nil {
		o.Observe(telemetry.Event{Type: EventRefused, Name: l.cfg.Name, Err: err})
	}
	return err
}

// release gives back the slot of a call that ended: to the first queued
// caller that may have it, else to the pool. It takes the lock only when
// callers are queued.
func (l *Limiter) release() {
	for s := l.state.Load(); queuedOf(s) == 0; s = l.state.Load() {
		if heldOf(s) == 0 {
			panic("adaptive: Done without a call in flight")
		}
		if l.state.CompareAndSwap(s, s-1) {
			return
		}
	}
	l.mu.Lock()
	l.state.Add(^uint64(0)) // one call fewer in flight
	l.dispatchLocked()
	l.mu.Unlock()
}

// setLimit makes n the limit of admission, and admits queued callers if
// it grew.
func (l *Limiter) setLimit(n uint64) {
	for {
		s := l.state.Load()
		ns := s&^(fieldMask<<limitShift) | n<<limitShift
		if l.state.CompareAndSwap(s, ns) {
			if n > limitOf(s) && queuedOf(ns) > 0 {
				l.mu.Lock()
				l.dispatchLocked()
				l.mu.Unlock()
			}
			return
		}
	}
}

// Stats is a snapshot of a [Limiter], for metrics.
type Stats struct {
	// Limit is how many calls may be in flight at once now.
	Limit int
	// InFlight is how many calls hold a permit now; more than Limit
	// after the limit was lowered, until enough of them end.
	InFlight int
	// Queued is how many callers wait for admission now.
	Queued int
	// Refused counts the calls refused since New: over the limit, their
	// place in the queue taken, or MaxWait spent in the queue. It only
	// grows.
	Refused uint64
	// Latency is the mean latency of the successful calls of the last
	// window that ended (of those timed: see [Limiter]); 0 before the
	// first, or if it had none.
	Latency time.Duration
	// Baseline is the limiter's estimate of the dependency's latency
	// without queueing (see [Window]); 0 before the first window with a
	// successful call.
	Baseline time.Duration
}

// Stats returns the limiter's state now. Limit, InFlight and Queued are
// read together, from one atomic word, so they are never torn; the other
// fields are read just after. Stats takes no lock and allocates nothing.
func (l *Limiter) Stats() Stats {
	s := l.state.Load()
	return Stats{
		Limit:    int(limitOf(s)),
		InFlight: int(heldOf(s)),
		Queued:   int(queuedOf(s)),
		Refused:  l.rejected.Load(),
		Latency:  time.Duration(l.latency.Load()),
		Baseline: time.Duration(l.baseline.Load()),
	}
}
