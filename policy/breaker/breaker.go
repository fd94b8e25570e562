package breaker

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Breaker is a circuit breaker: a guard, shared by every call to one
// dependency, that stops calls while the dependency fails. It is closed
// (admitting calls) until a trip rule holds, then open (refusing them) for a
// cooldown, then half-open (admitting a few trial calls whose outcome closes
// it or opens it again). See [Config] for the rules.
//
// Use it through [Policy], or directly with [Breaker.Allow] and the
// [Permit] it returns. Create one with [New] (or get one per key from a
// [Keyed]); the zero Breaker is not usable. A Breaker is safe for
// simultaneous use by multiple goroutines.
//
// While closed, admitting a call and reporting its success allocate
// nothing and take no lock; nor does counting a success, except with a
// time-based window (WindowDuration), where the success goes into its
// bucket under a lock of the caller's counter shard. Failures, slow calls
// and transitions take the breaker's lock.
//
// A breaker at rest is small: about 470 bytes with the default
// configuration, whatever GOMAXPROCS is (a window or a growing cooldown
// adds its own state). Successes are counted in one counter shard until
// calls from several goroutines are measured to collide on it; then the
// breaker allocates, once, a set of 16 to 128 shards of 128 bytes each
// (2 to 16 KiB, by GOMAXPROCS), so that parallel callers rarely write the
// same cache line. Only breakers under heavy parallel load (on the order
// of 100 000 calls a second from several cores) grow.
type Breaker struct {
	// Read by every call; written by transitions and failures.
	word    atomic.Uint64 // generation<<3 | forced<<2 | state
	cfg     *settings     // immutable; shared by the breakers of a Keyed
	measure bool          // cfg.measure, here on the line every call reads
	timed   bool          // cfg.timed, likewise
	// hint tells, on the real clock, whether lastRefusal's RetryAfter is
	// fresh (see freshenLocked): an open breaker then refuses without
	// reading the clock.
	hint atomic.Uint32
	// Counters written by calls: s0, and the set grown under contention.
	s0         shard
	set        unsafe.Pointer // *shardSet, atomically: &one until the breaker grows
	one        shardSet       // s0 alone
	contention atomic.Uint64  // collisions on s0 (see noteCollision)
	deadline   atomic.Int64   // while open: end of the cooldown, in ns since cfg.base
	// The last refusal with a wait (see refusedErr).
	lastRefusal atomic.Pointer[refused]
	key         string // a Keyed's breaker: its key, as events say it

	mu         sync.Mutex
	hintTimer  *time.Timer // real clock: makes the hint stale (see freshenLocked)
	since      int64       // when the current state was entered, in ns since cfg.base
	fails      uint64      // failures in this generation
	slow       uint64      // slow calls in this generation
	succAtFail uint64      // successes of this generation at its last failure
	streak     uint64      // consecutive failures up to the last failure
	carry      uint64      // successes folded away from the shards in this generation
	refusedAcc uint64      // refusals of all generations not in the shards' words
	trials     []trial     // outstanding trials of this half-open state
	nextTrial  uint32
	notes      *notes            // not yet delivered; nil until the first
	win        *windows          // the sliding window; nil: none
	seq        *backoff.Sequence // cooldowns since the breaker last closed; nil: fixed cooldown
}

// windows is a breaker's sliding window, count-based or time-based.
type windows struct {
	cw countWindow
	tw timeWindow
}

// settings is the effective configuration: Config with its defaults
// applied, in the units the breaker works in. It never changes; the
// breakers of a Keyed share one.
type settings struct {
	name             string
	threshold        uint64
	failureRatio     float64
	slowRatio        float64
	slowCall         int64 // ns; 0: off
	tripIf           func(Counts) bool
	minCalls         uint64
	cooldown         time.Duration
	schedule         *backoff.Schedule // nil: the fixed cooldown
	trialTimeout     int64             // how long a trial may go without reporting, ns (> 0)
	maxTrials        uint64
	successThreshold uint64
	windowCalls      uint64 // size of a count-based window; 0: none
	bucketWidth      int64  // ns per bucket of a time-based window
	buckets          int64  // buckets of a time-based window; 0: none
	classify         func(error) Outcome
	onChange         func(Transition)
	obs              telemetry.Observer // nil: no events
	clk              clock.Clock
	regroup          func(*Breaker)                          // a Keyed's: called, locked, when a breaker closes or stops being closed
	base             time.Time                               // the breakers' time 0
	forcedErr        atomic.Pointer[resilience.RefusedError] // made on the first ForceOpen
	measure          bool                                    // slowCall > 0: a call's duration is measured
	timed            bool                                    // an outcome needs the time: slowCall or a time window
	ratios           bool                                    // a rule that needs counts: a ratio or tripIf
	monotonic        bool                                    // clk is clock.Real(): read only the monotonic clock
}

// The state word: the state in the low two bits, the forced flag above,
// the generation in the rest.
const (
	stateMask = 3
	forcedBit = 4
	genShift  = 3
)

func makeWord(gen uint64, s State, forced bool) uint64 {
	w := gen<<genShift | uint64(s)
	if forced {
		w |= forcedBit
	}
	return w
}

func wordGen(w uint64) uint64  { return w >> genShift }
func wordState(w uint64) State { return State(w & stateMask) }
func wordForced(w uint64) bool { return w&forcedBit != 0 }

// now returns the breaker's time: nanoseconds since cfg.base. With the
// real clock it reads only the monotonic clock (time.Since), which costs
// about half of time.Now.
func (b *Breaker) now() int64 {
	if b.cfg.monotonic {
		return int64(time.Since(b.cfg.base))
	}
	return int64(b.cfg.clk.Now().Sub(b.cfg.base))
}

// satAdd returns a+d for d >= 0, saturating at the largest int64.
func satAdd(a, d int64) int64 {
	if a > math.MaxInt64-d {
		return math.MaxInt64
	}
	return a + d
}

// New returns a closed breaker configured by opts; with no options, the
// breaker of the zero [Config]: it trips after 5 consecutive failures,
// stays open 30s, and closes after one successful trial.
//
// New panics if an option is nil or the configuration is invalid, with the
// message of [Config.Validate].
func New(opts ...Option) *Breaker {
	b := new(Breaker)
	b.init(newSettings(build("New", opts)), "")
	return b
}

// build applies opts to the zero Config and validates the result; fn
// names the function in the panic of a nil option.
func build(fn string, opts []Option) Config {
	var c Config
	for _, o := range opts {
		if o == nil {
			panic("breaker: " + fn + " option must not be nil")
		}
		o.apply(&c)
	}
	if err := c.Validate(); err != nil {
		panic(err.Error())
	}
	return c
}

// init makes b a closed breaker of settings s; key is its key in a Keyed.
func (b *Breaker) init(s *settings, key string) {
	b.cfg, b.key = s, key
	b.measure, b.timed = s.measure, s.timed
	b.one = shardSet{first: unsafe.Pointer(&b.s0)}
	atomic.StorePointer(&b.set, unsafe.Pointer(&b.one))
	if s.schedule != nil {
		seq := s.schedule.Start()
		b.seq = &seq
	}
	switch {
	case s.buckets > 0:
		b.win = &windows{tw: newTimeWindow(s.bucketWidth, s.buckets)}
		b.s0.ring = newSuccessRing(s.buckets)
	case s.windowCalls > 0:
		b.win = &windows{cw: countWindow{size: s.windowCalls}}
	}
	b.word.Store(makeWord(1, Closed, false))
}

func newSettings(c Config) *settings {
	s := &settings{
		name:             c.Name,
		failureRatio:     c.FailureRatio,
		slowRatio:        c.SlowCallRatio,
		slowCall:         int64(c.SlowCall),
		measure:          c.SlowCall > 0,
		tripIf:           c.TripIf,
		ratios:           c.FailureRatio > 0 || c.SlowCallRatio > 0 || c.TripIf != nil,
		cooldown:         c.Cooldown,
		trialTimeout:     int64(c.TrialTimeout),
		maxTrials:        uint64(max(c.MaxTrials, 1)),
		successThreshold: uint64(max(c.SuccessThreshold, 1)),
		classify:         c.Classify,
		onChange:         c.OnStateChange,
		obs:              c.Observer,
		clk:              c.Clock,
	}
	if !c.CooldownBackoff.IsZero() {
		sch := c.CooldownBackoff
		s.schedule = &sch
	}
	switch {
	case c.Threshold > 0:
		s.threshold = uint64(c.Threshold)
	case c.Threshold == 0 && !s.ratios: // the default; Off leaves it 0: no rule
		s.threshold = 5
	}
	if s.cooldown == 0 {
		s.cooldown = 30 * time.Second
	}
	if s.trialTimeout == 0 { // the longest cooldown there can be
		s.trialTimeout = int64(s.cooldown)
		if s.schedule != nil {
			s.trialTimeout = int64(s.schedule.Max())
		}
	}
	if s.classify == nil {
		s.classify = DefaultClassify
	}
	switch {
	case c.WindowDuration > 0:
		s.buckets = int64(c.buckets())
		s.bucketWidth = int64(c.WindowDuration) / s.buckets
	case c.WindowCalls > 0:
		s.windowCalls = uint64(c.WindowCalls)
	case c.FailureRatio > 0 || c.SlowCallRatio > 0:
		s.windowCalls = 100
	}
	s.timed = s.slowCall > 0 || s.buckets > 0
	s.minCalls = uint64(c.MinCalls)
	if c.MinCalls == 0 {
		s.minCalls = 10
		if s.windowCalls > 0 {
			s.minCalls = min(10, s.windowCalls)
		}
	}
	if s.clk == nil {
		s.clk = clock.Real()
	}
	s.base = s.clk.Now()
	s.monotonic = s.clk == clock.Real()
	return s
}

// layer returns the name of the breaker's policy layer: "breaker", or
// "breaker(name)".
func (s *settings) layer() string {
	if s.name == "" {
		return "breaker"
	}
	return "breaker(" + s.name + ")"
}

// forcedRefusal returns the refusal of a breaker forced open, made once
// for all the breakers of s.
func (s *settings) forcedRefusal() *resilience.RefusedError {
	if e := s.forcedErr.Load(); e != nil {
		return e
	}
	s.forcedErr.CompareAndSwap(nil, resilience.Refuse(ErrForcedOpen, s.name, resilience.Never))
	return s.forcedErr.Load()
}

// Name returns the breaker's name (Config.Name), which may be empty.
func (b *Breaker) Name() string { return b.cfg.name }

// State returns the breaker's state now. The reading is fresh: an open
// breaker whose cooldown has passed reads [HalfOpen], and a half-open
// breaker whose trials have expired reads [Open], without any call having
// gone through it (State makes such a due transition happen, and delivers
// its callback). A breaker forced open reads Open, forced closed reads
// Closed.
func (b *Breaker) State() State {
	w := b.word.Load()
	switch wordState(w) {
	case Closed:
		return Closed
	case Open:
		if wordForced(w) || b.now() < b.deadline.Load() && b.word.Load() == w {
			return Open
		}
	}
	b.mu.Lock()
	now := b.now() // under the lock: transitions' times never go backwards
	b.advanceLocked(now)
	s := wordState(b.word.Load())
	b.unlock()
	return s
}

// Counts returns a snapshot of the counts of the current state (see
// [Counts]). The reading is fresh: a time-based window that has rolled, or
// a due transition, shows without any call having gone through the breaker.
func (b *Breaker) Counts() Counts {
	b.mu.Lock()
	now := b.now() // under the lock: transitions' times never go backwards
	b.advanceLocked(now)
	c := b.countsLocked(now)
	b.unlock()
	return c
}

// Allow asks to make one call. If the breaker admits it, Allow returns a
// [Permit] and a nil error; the caller makes the call and reports its
// outcome exactly once on the permit ([Permit.Done] or [Permit.Report]).
// Otherwise Allow returns a Permit on which reports do nothing, and a
// *[resilience.RefusedError] matching [ErrOpen] or [ErrTooManyTrials].
//
// A closed breaker admits every call; admission then takes no lock and
// does not allocate. An open breaker refuses until its cooldown has passed;
// on the real clock (the default) its refusals share one error and read no
// clock for 1/64 of the cooldown left (at least a millisecond), so a shared
// RetryAfter may be up to that much longer than the time left, never
// shorter, and the cooldown's end is noticed by the first call after a
// timer that fires then.
// On any other clock every refusal reads it. A half-open breaker admits up
// to MaxTrials trials at once. A refusal rarely allocates: refusals share
// their error when they can.
func (b *Breaker) Allow() (Permit, error) {
	// The permit is built here from values returned in registers, so that
	// Allow inlines and the caller's permit is written in place.
	a, err := b.admit()
	return Permit{b: b, word: a.word, start: a.start, trial: a.trial}, err
}

// admission is what a Permit holds of an admitted call. A refusal's is
// zero: word 0 is no generation's, so reports on its permit do nothing.
type admission struct {
	word  uint64
	start int64
	trial uint32
}

// admit admits a call or returns a refusal.
func (b *Breaker) admit() (admission, error) {
	if w := b.word.Load(); wordState(w) == Closed && !b.measure {
		return admission{word: w}, nil
	}
	var a admission
	err := b.admitSlow(&a)
	return a, err
}

func (b *Breaker) admitSlow(p *admission) error {
	w := b.word.Load()
	switch {
	case wordState(w) == Closed: // a call whose duration is measured
		p.word, p.start = w, b.now()
		return nil
	case wordState(w) == Open && wordForced(w):
		b.reject(wordGen(w), false)
		return b.refuse(b.cfg.forcedRefusal())
	case wordState(w) == Open && b.cfg.monotonic:
		// The real clock: while the last refusal's hint is fresh, refuse
		// with it, reading no clock (see freshenLocked); else take the
		// lock, which refreshes it.
		if err := b.refuseFresh(w); err != nil {
			return err
		}
	case wordState(w) == Open:
		now := b.now()
		if d := b.deadline.Load(); now < d && b.word.Load() == w {
			b.reject(wordGen(w), false)
			return b.refuse(b.refusedErr(ErrOpen, wordGen(w), d-now))
		}
	}
	b.mu.Lock()
	now := b.now()
	b.advanceLocked(now)
	w = b.word.Load()
	switch {
	case wordState(w) == Closed:
		b.unlock()
		p.word, p.start = w, now
		return nil
	case wordState(w) == HalfOpen && uint64(len(b.trials)) < b.cfg.maxTrials:
		p.word, p.start, p.trial = w, now, b.admitTrialLocked(now)
		b.unlock()
		return nil
	}
	b.reject(wordGen(w), true)
	var err *resilience.RefusedError
	switch {
	case wordState(w) == HalfOpen: // MaxTrials trials are outstanding
		d, _ := b.trialDeadline()
		err = b.refusedErr(ErrTooManyTrials, wordGen(w), d-now)
	case wordForced(w):
		err = b.cfg.forcedRefusal()
	default:
		left := b.deadline.Load() - now
		err = b.refusedErr(ErrOpen, wordGen(w), left)
		if b.cfg.monotonic {
			b.freshenLocked(left)
		}
	}
	b.unlock()
	return b.refuse(err)
}

// refuse reports refusal r to the observer, if there is one, and returns
// it: with an observer, one call that allocates nothing. It is small
// enough to inline.
func (b *Breaker) refuse(r *resilience.RefusedError) error {
	if b.cfg.obs != nil {
		b.observeRefusal(r)
	}
	return r
}

func (b *Breaker) observeRefusal(r *resilience.RefusedError) {
	b.cfg.obs.Observe(telemetry.Event{Type: EventRefused, Name: b.cfg.name, Key: b.key, Err: r, Wait: r.RetryAfter()})
}

// refusedErr returns the refusal, for reason (ErrOpen or ErrTooManyTrials),
// of a breaker in generation gen whose state may change in wait ns: the end
// of the cooldown, or the expiry of the first outstanding trial. Refusals
// within the same millisecond of the same generation share one error, so
// that refusing a call usually allocates nothing.
func (b *Breaker) refusedErr(reason error, gen uint64, wait int64) *resilience.RefusedError {
	d := ceilMillis(time.Duration(wait))
	if r := b.lastRefusal.Load(); r != nil && r.gen == gen && r.err.RetryAfter() == d && r.err.Reason() == reason {
		return r.err
	}
	r := &refused{err: resilience.Refuse(reason, b.cfg.name, d), gen: gen}
	b.lastRefusal.Store(r)
	return r.err
}

// refused is a refusal and the generation that made it.
type refused struct {
	err *resilience.RefusedError
	gen uint64
}

// Record applies the outcome of a call made without a permit (for example
// one reported by another process): a failure if failure is true, else a
// success. It counts only while the breaker is closed (a failure may trip
// it); in the other states it does nothing. A recorded call is never slow.
func (b *Breaker) Record(failure bool) {
	w := b.word.Load()
	if wordState(w) != Closed {
		return
	}
	o := Success
	if failure {
		o = Failure
	}
	b.complete(admission{word: w}, false, o, nil)
}

// ForceOpen opens the breaker and holds it open: it refuses every call
// until [Breaker.ForceClosed] or [Breaker.Reset], with a *[resilience.RefusedError]
// that matches [ErrOpen] and whose RetryAfter is the largest Duration
// (time.Duration(math.MaxInt64)), a "never" hint: a retry policy gives up
// at once instead of waiting. Like every manual control it starts a new
// generation: counts start from zero, and outstanding permits report
// nothing.
func (b *Breaker) ForceOpen() { b.force(Open, true) }

// ForceClosed closes the breaker and holds it closed: it admits every call
// and keeps counting, but no rule trips it, until [Breaker.ForceOpen] or
// [Breaker.Reset]. This disables the breaker.
func (b *Breaker) ForceClosed() { b.force(Closed, true) }

// Reset closes the breaker and returns it to normal operation: counts start
// from zero, a growing cooldown starts over, and outstanding permits report
// nothing.
func (b *Breaker) Reset() { b.force(Closed, false) }

func (b *Breaker) force(to State, forced bool) {
	b.mu.Lock()
	now := b.now() // under the lock: transitions' times never go backwards
	b.advanceLocked(now)
	b.setLocked(to, forced, now)
	b.restartCooldownsLocked()
	b.unlock()
}

// complete applies outcome o of the call admitted as a, which returned err
// (nil when the outcome was reported without an error). measured tells
// whether the call's duration is known.
//
// The common case — a success, while closed, with no rule that needs the
// clock — takes no lock and writes one cache line of the goroutine's own
// shard: the consecutive failures need no write (see failLocked).
func (b *Breaker) complete(a admission, measured bool, o Outcome, err error) {
	if o != Success || wordState(a.word) != Closed || b.timed || !b.countSuccess(a.word) {
		b.finishSlow(a.word, a.trial, a.start, measured, o, err)
	}
}

// countSuccess counts a success of a call admitted while closed with state
// word w, in the common case: no rule needs the clock, the caller's shard
// counts for w's generation and is not full, and the compare-and-swap on it
// succeeds at once. It reports false, having counted nothing, in every
// other case (finishSlow then counts the success, and a collision on s0).
// It is small enough to inline. The caller checks that no rule needs the
// clock (b.timed is false).
//
// It need not check that w is still current: if the breaker has left w's
// generation, the shard either still counts for it (and the count, of a
// generation no longer read, is harmless) or counts for a later one (and
// the success goes to finishSlow, which drops it).
func (b *Breaker) countSuccess(w uint64) bool {
	c := &b.shardFor().succ
	x := c.Load()
	// x's tag is w's generation (tag(wordGen(w)), written out to keep
	// the cost within the inlining budget) and its count is below
	// countMask.
	return x-w>>genShift<<32 < countMask && c.CompareAndSwap(x, x+1)
}

// completeErr completes the call admitted as a, which returned the non-nil
// err, with the outcome err says (see outcome). If the classifier panics,
// or returns an invalid Outcome (then completeErr panics), the call is
// completed as ignored first, so that its permit is not lost.
func (b *Breaker) completeErr(ctx context.Context, a admission, err error) {
	o := Ignored
	defer func() { b.complete(a, true, o, err) }()
	o = b.outcome(ctx, err)
}

// outcome returns what a call's non-nil error says: a failure if the call
// panicked; ignored if the caller's ctx was canceled, since the caller's
// own cancellation is never the dependency's failure; else what the
// classifier says. It panics if the classifier returns an invalid Outcome.
func (b *Breaker) outcome(ctx context.Context, err error) Outcome {
	switch {
	case err == errPanicked:
		return Failure
	case errors.Is(ctx.Err(), context.Canceled):
		return Ignored
	}
	o := b.cfg.classify(err)
	if o > Ignored {
		panic(fmt.Sprintf("breaker: Classify outcome must be Success, Failure or Ignored, got %d (for error %q)", o, err))
	}
	return o
}

// errPanicked marks a call that panicked (or whose goroutine exited).
var errPanicked = errors.New("breaker: the call panicked")

// finishSlow applies outcome o, of a call that returned err, admitted with
// state word w: the cases complete does not handle inline.
func (b *Breaker) finishSlow(w uint64, trial uint32, start int64, measured bool, o Outcome, err error) {
	if b.word.Load() != w {
		return // an older generation's verdict
	}
	if wordState(w) != Closed {
		b.finishTrial(w, trial, start, o, err)
		return
	}
	if o == Ignored {
		if obs := b.cfg.obs; obs != nil {
			obs.Observe(telemetry.Event{Type: EventIgnored, Name: b.cfg.name, Key: b.key, Err: err})
		}
		return
	}
	var now int64
	slow := false
	if b.timed {
		now = b.now()
		slow = measured && b.cfg.slowCall > 0 && now-start > b.cfg.slowCall
	}
	if o == Success && !slow {
		gen := wordGen(w)
		if !b.timed {
			b.missedSuccess(gen)
		}
		b.addSuccess(gen, false)
		if b.cfg.buckets > 0 {
			b.shardFor().ring.add(b, gen, b.win.tw.bucket(now))
		}
		return
	}
	b.mu.Lock()
	if b.word.Load() != w {
		b.unlock()
		return
	}
	now = b.now()
	slow = measured && b.cfg.slowCall > 0 && now-start > b.cfg.slowCall
	gen := wordGen(w)
	var streak uint64
	if o == Success {
		b.addSuccess(gen, true)
		if b.cfg.buckets > 0 {
			b.shardFor().ring.add(b, gen, b.win.tw.bucket(now))
		}
	} else {
		streak = b.failLocked(gen)
		b.noteLocked(EventFailure, err)
	}
	if slow {
		b.slow++
	}
	b.windowAddLocked(gen, o == Failure, slow, now)
	if !wordForced(w) && b.tripsLocked(now, streak) {
		b.setLocked(Open, false, now)
	}
	b.unlock()
}

// missedSuccess is called for a success of generation gen that
// countSuccess did not count although no rule needs the clock: its
// compare-and-swap failed, its shard counted for another generation, or
// its count was full. If s0 counts for gen and is not full, the
// compare-and-swap failed: another goroutine's write came in between, a
// collision.
func (b *Breaker) missedSuccess(gen uint64) {
	if b.isGrown() {
		return
	}
	if x := b.s0.succ.Load(); x-tag(gen) < countMask {
		b.collided()
	}
}

// finishTrial applies outcome o, of a call that returned err, of
// half-open trial id.
func (b *Breaker) finishTrial(w uint64, id uint32, start int64, o Outcome, err error) {
	b.mu.Lock()
	now := b.now()       // under the lock: transitions' times never go backwards
	b.advanceLocked(now) // an expired trial reports nothing
	if b.word.Load() != w || !b.removeTrialLocked(id) {
		b.unlock()
		return
	}
	if o == Ignored {
		b.noteLocked(EventIgnored, err)
		b.unlock()
		return
	}
	gen := wordGen(w)
	slow := b.cfg.slowCall > 0 && now-start > b.cfg.slowCall
	if slow {
		b.slow++
	}
	switch {
	case o == Failure:
		b.failLocked(gen)
		b.noteLocked(EventFailure, err)
		b.setLocked(Open, false, now)
	case slow:
		b.addSuccess(gen, true)
		b.setLocked(Open, false, now)
	default:
		b.addSuccess(gen, true)
		if b.successesLocked(gen) >= b.cfg.successThreshold {
			b.setLocked(Closed, false, now)
		}
	}
	b.unlock()
}

// tripsLocked reports whether a trip rule holds, streak being the
// consecutive failures.
func (b *Breaker) tripsLocked(now int64, streak uint64) bool {
	s := b.cfg
	if s.threshold > 0 && streak >= s.threshold {
		return true
	}
	if !s.ratios {
		return false
	}
	c := b.countsLocked(now)
	if c.Calls >= s.minCalls {
		if s.failureRatio > 0 && c.FailureRatio >= s.failureRatio {
			return true
		}
		if s.slowRatio > 0 && float64(c.Slow)/float64(c.Calls) >= s.slowRatio {
			return true
		}
	}
	return s.tripIf != nil && s.tripIf(c)
}

// advanceLocked makes the transitions that time has made due by now: an
// open breaker whose cooldown has ended turns half-open, and a half-open
// breaker with a trial outstanding TrialTimeout after it was admitted
// opens again. Each takes effect at the instant it became due.
func (b *Breaker) advanceLocked(now int64) {
	for {
		w := b.word.Load()
		if wordState(w) == Open && !wordForced(w) && now >= b.deadline.Load() {
			b.setLocked(HalfOpen, false, b.deadline.Load())
			continue
		}
		if d, ok := b.trialDeadline(); ok && wordState(w) == HalfOpen && now >= d {
			b.setLocked(Open, false, d)
			continue
		}
		return
	}
}

// setLocked moves the breaker to state to at time at, in a new generation.
// forced holds it there (ForceOpen, ForceClosed).
func (b *Breaker) setLocked(to State, forced bool, at int64) {
	old := b.word.Load()
	from := wordState(old)
	changed := from != to
	var left Counts
	if changed && b.cfg.onChange != nil {
		left = b.countsLocked(at)
	}
	gen := wordGen(old) + 1
	b.fails, b.slow, b.succAtFail, b.streak, b.carry = 0, 0, 0, 0, 0
	b.trials, b.nextTrial = b.trials[:0], 0
	if b.win != nil {
		b.win.cw.reset()
		b.win.tw.reset()
	}
	var wait time.Duration // how long the new state lasts, if known
	switch {
	case to == Open && !forced:
		wait = b.cfg.cooldown
		if b.seq != nil {
			wait = b.seq.Next()
		}
		b.deadline.Store(satAdd(at, int64(wait)))
	case to == Open:
		wait = resilience.Never
	case to == Closed:
		b.restartCooldownsLocked()
	}
	b.word.Store(makeWord(gen, to, forced))
	if changed {
		b.since = at
	}
	if f := b.cfg.regroup; f != nil && (from != Closed || wordForced(old)) != (to != Closed || forced) {
		f(b) // a Keyed's breaker went from closed to not, or back
	}
	if changed && (b.cfg.onChange != nil || b.cfg.obs != nil) {
		b.queueLocked(note{
			transition: true,
			tr: Transition{
				Name: b.cfg.name, Key: b.key, From: from, To: to, Generation: gen,
				At: b.cfg.base.Add(time.Duration(at)), Counts: left,
			},
			ev: telemetry.Event{
				Type: transitionTypes[to], Name: b.cfg.name, Key: b.key,
				From: from.String(), To: to.String(), Wait: wait,
			},
		})
	}
}

// restartCooldownsLocked starts a growing cooldown over.
func (b *Breaker) restartCooldownsLocked() {
	if b.seq != nil {
		*b.seq = b.cfg.schedule.Start()
	}
}

// transitionTypes are the event types of transitions, by the state entered.
var transitionTypes = [...]telemetry.Type{
	Closed:   EventClosed,
	Open:     EventOpened,
	HalfOpen: EventHalfOpened,
}

// noteLocked queues an event of type t about err for the observer, if
// there is one, to be delivered after the transitions and events queued
// before it.
func (b *Breaker) noteLocked(t telemetry.Type, err error) {
	if b.cfg.obs != nil {
		b.queueLocked(note{ev: telemetry.Event{Type: t, Name: b.cfg.name, Key: b.key, Err: err}})
	}
}

// countsLocked returns the counts of the current state at time now.
func (b *Breaker) countsLocked(now int64) Counts {
	w := b.word.Load()
	gen := wordGen(w)
	succ := b.successesLocked(gen)
	c := Counts{
		Successes:            succ,
		Failures:             b.fails,
		Slow:                 b.slow,
		ConsecutiveSuccesses: succ - b.succAtFail,
		ConsecutiveFailures:  b.streakLocked(succ),
		Refused:              b.rejectedLocked(gen),
	}
	if x := b.win; x != nil && wordState(w) == Closed {
		switch {
		case x.cw.size > 0:
			c.Successes, c.Failures, c.Slow = x.cw.countsLocked(succ + b.fails)
		case x.tw.buckets > 0:
			cur := x.tw.bucket(now)
			c.Successes = 0
			for s := range b.shards {
				c.Successes += s.ring.sum(gen, cur)
			}
			c.Failures, c.Slow = x.tw.sum(cur)
		}
	}
	c.Calls = c.Successes + c.Failures
	if c.Calls > 0 {
		c.FailureRatio = float64(c.Failures) / float64(c.Calls)
	}
	return c
}

// windowAddLocked records a failure and/or a slow call in the window.
func (b *Breaker) windowAddLocked(gen uint64, failed, slow bool, now int64) {
	switch x := b.win; {
	case x == nil:
	case x.cw.size > 0:
		pos := b.successesLocked(gen) + b.fails
		x.cw.add(pos, failed, slow)
	case x.tw.buckets > 0:
		x.tw.add(x.tw.bucket(now), failed, slow)
	}
}
