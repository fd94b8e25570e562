package hedge

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/telemetry"
)

// New returns a hedge policy, named "hedge(delay)" (e.g. "hedge(50ms)"),
// for calls whose latency has a long tail: it starts the call (the first
// attempt) and, if no attempt has returned an accepted result by delay,
// starts another (a hedge), and so on every delay, up to MaxHedges hedges.
// The first accepted result (by default, the first without error) wins:
// the other attempts' contexts are cancelled, and the call returns the
// winner's result once they have returned. An attempt whose result is not
// accepted starts the next hedge at once, if one is left, but:
//
//   - A refusal of an inner guard (an error matching resilience.ErrRefused:
//     an open breaker, a full bulkhead, a rate limit) starts no more
//     hedges, whatever its Retry-After hint: the dependency was not
//     called, so there is no slow call to race, and another attempt would
//     be refused as well. Whether to wait out the refusal is the call of a
//     retry outside the hedge, which gets the refusal as soon as no attempt
//     runs.
//   - An error with a Retry-After hint of at most [Config.MaxWait] (see
//     resilience.RetryAfter: an HTTP 429 or 503 with Retry-After) starts
//     the next hedge no earlier than the hint from then, and the ones after
//     it resume at delay. A longer hint (resilience.Never included), or one
//     that would end at or after the caller's deadline, starts no more
//     hedges: the attempts running go on, and the call returns as soon as
//     none runs.
//
// So a hint never holds a call longer than MaxWait after the failure that
// gave it; with the default MaxWait, the delay, no longer than a slow
// attempt holds the next hedge. The call waits for a hedge that waits out
// a hint, as for any other, unless the caller's context ends first.
//
// If no attempt's result is accepted, the call returns the value of the
// attempt that finished last and an error that says so and wraps the
// attempts' errors, in the order the attempts started, as errors.Join does:
//
//	hedge: all 2 attempts failed: connection reset; 503 service unavailable
//
// The error is bounded: of a call of more than six attempts, it keeps (for
// errors.Is and errors.As, and in its message) the errors of the first
// three and of the last three to start, and says how many it left out:
//
//	hedge: all 9 attempts failed: e0; e1; e2; (3 more); e6; e7; e8
//
// If the caller's context is already done when the call arrives, the call
// returns ctx.Err() at once and starts no attempt. If it ends during the
// call, no further attempt starts, and the error (when no result was
// accepted) also matches the context's error:
//
//	hedge: context canceled after 1 attempt: context canceled
//
// Attempts never outlive the call: it returns only after every attempt it
// started has returned. An op that ignores its context therefore holds up
// the call until it returns; put a timeout with WithAbandon inside the
// hedge for such ops. A panic in any attempt (or runtime.Goexit) reaches the
// caller's goroutine, after the other attempts have been cancelled and have
// returned; a panic of the first attempt keeps its stack.
//
// Hedged requests are described by Dean and Barroso, "The Tail at Scale",
// CACM 56(2), 2013; starting the next hedge at once after a failure, and
// waiting out a server's pushback, are the rules of gRPC's hedging policy
// (gRFC A6). Only hedge calls that are safe
// to make more than once (idempotent reads), and mind that the dependency
// sees up to 1+MaxHedges times the calls.
//
// With [WithQuantile] the delay is a quantile of the policy's own
// attempts' latencies, and the policy is named after it ("hedge(p95)");
// with [WithBudget] a call that finds the budget spent starts no more
// attempts. The policy's calls share the estimator and the budget.
//
// Cost: the first attempt runs on the caller's goroutine; a call that needs
// no hedge allocates only a cancellable context (context.WithCancel's two
// allocations): the record of the race and its timer are kept by the
// policy (in a sync.Pool) from an earlier call that needed none, or made
// for the first such call. A call that hedges allocates the record and the
// timer, and each hedge adds a goroutine. A call that fails keeps at most
// six attempt errors, however many attempts it starts. With no observer, reporting costs nothing; an
// observer adds no allocation (its events are passed by value), and the
// events of a call that hedges are reported as the package documentation
// says ("Events").
//
// New panics if an option is nil, and with the message of [Config.Validate]
// if the configuration is invalid, and if an option that carries a result
// type ([WithAccept], [WithConfig]) carries another than T. The policy is
// safe for simultaneous use by multiple goroutines if Accept is.
func New[T any](delay time.Duration, opts ...Option) resilience.Policy[T] {
	c := configure[T](delay, opts)
	p := &policy[T]{delay: c.Delay, maxHedges: c.MaxHedges, maxWait: c.MaxWait, accept: c.Accept, clock: c.Clock,
		obs: c.Observer, name: c.Name}
	if p.clock == nil {
		p.clock = clock.Real()
	}
	name := "hedge(" + c.Delay.String() + ")"
	if c.Quantile > 0 {
		p.est = newEstimator(c.Quantile, c.MinDelay, c.MaxDelay, c.Delay)
		name = "hedge(p" + strconv.FormatFloat(100*c.Quantile, 'g', -1, 64) + ")"
	}
	if c.Budget > 0 {
		p.budget = newBudget(c.Budget)
	}
	return resilience.New(name, p.run).Describe(describe(c))
}

// policy is the configuration of one hedge policy, fixed at New, and the
// state its calls share: the quantile estimator and the budget.
type policy[T any] struct {
	delay     time.Duration
	maxHedges int           // attempts after the first, at most MaxHedgesLimit
	maxWait   time.Duration // the longest hint waited for; 0: the delay; resilience.Off: no cap
	accept    func(T, error) bool
	clock     clock.Clock
	est       *estimator // nil: a fixed delay
	budget    *budget    // nil: no budget
	obs       telemetry.Observer
	name      string // in the events

	// races keeps the records of calls that ended without a hedge and
	// whose timer was stopped before it fired (see race.reusable), with
	// their timer and its callback: a call that needs no hedge then
	// allocates only its cancellable context.
	races sync.Pool
}

// newRace returns a record for a call: a kept one, or a new one whose
// timer is not yet made.
func (p *policy[T]) newRace() *race[T] {
	if r, ok := p.races.Get().(*race[T]); ok {
		return r
	}
	r := &race[T]{p: p}
	r.fire = r.onTimer
	return r
}

// recycle keeps r for another call if no goroutine but the caller's can
// still touch it (see reusable).
func (p *policy[T]) recycle(r *race[T]) {
	if !r.reusable() {
		return
	}
	*r = race[T]{p: p, timer: r.timer, fire: r.fire}
	p.races.Put(r)
}

// waitsFor reports whether a hint d > 0 is short enough to wait for (see
// Config.MaxWait); resilience.Never never is.
func (p *policy[T]) waitsFor(d time.Duration) bool {
	switch {
	case d == resilience.Never:
		return false
	case p.maxWait == resilience.Off:
		return true
	case p.maxWait == 0:
		return d <= p.delay
	}
	return d <= p.maxWait
}

func (p *policy[T]) accepts(v T, err error) bool {
	if p.accept == nil {
		return err == nil
	}
	return p.accept(v, err)
}

// race is the state of one call.
type race[T any] struct {
	p      *policy[T]
	delay  time.Duration // between attempts, fixed for the call
	next   resilience.Next[T]
	parent context.Context    // the caller's context
	ctx    context.Context    // the attempts' context, child of parent
	cancel context.CancelFunc // cancels ctx

	mu        sync.Mutex
	closed    bool          // no attempt will start any more
	hinted    bool          // an attempt's error asked to wait until notBefore
	deferred  bool          // the next attempt waits for notBefore on the timer
	settled   bool          // over is closed
	won       bool          // an accepted result is in v, err
	panicked  bool          // an attempt panicked (or called runtime.Goexit)
	timer     clock.Timer   // starts the next hedge; kept with the record, stopped
	fire      func()        // r.onTimer, the timer's callback, made once per record
	fired     bool          // onTimer has run (or waits for mu)
	rearmed   bool          // the timer was Reset after the call armed it
	disarmed  bool          // the call's timer was stopped before it fired
	running   int           // attempts started and not yet finished
	notBefore time.Time     // on p.clock: no attempt starts before it, if hinted
	v         T             // the winner's value, else the last failure's
	err       error         // the winner's error
	started   int           // attempts started, the first included
	failed    *failures     // the failed attempts' errors that are kept; made at the first failure
	panicVal  any           // the panicking attempt's value; nil for runtime.Goexit
	over      chan struct{} // closed once running is 0 and no attempt is deferred; made with the first hedge or deferral

	// With an observer: start is when the first attempt started, on
	// p.clock. emu orders the call's events: whoever decides an event
	// under mu locks emu before unlocking mu, and emits with emu held
	// (so mu is always locked before emu, and never while emu is held).
	// obsPanic, guarded by emu, is the observer's first panic value (never
	// nil: panic(nil) recovers as a *runtime.PanicNilError), raised on the
	// caller's goroutine once every attempt has returned.
	start    time.Time
	emu      sync.Mutex
	obsPanic any
}

func (p *policy[T]) run(ctx context.Context, next resilience.Next[T]) (T, error) {
	if err := ctx.Err(); err != nil {
		return *new(T), err // the caller gave up: no attempt starts
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := p.newRace()
	r.delay, r.next, r.parent, r.ctx, r.cancel, r.running, r.started = p.delay, next, ctx, actx, cancel, 1, 1
	if p.est != nil {
		r.delay = p.est.current()
	}
	if p.budget != nil {
		p.budget.deposit()
	}
	if p.obs != nil {
		r.start = p.clock.Now()
	}
	r.mu.Lock()
	if r.timer == nil {
		r.timer = p.clock.AfterFunc(r.delay, r.fire)
	} else {
		r.timer.Reset(r.delay) // a kept record's timer: stopped before it fired
	}
	r.mu.Unlock()

	// The first attempt runs here. If it panics, the hedges are stopped
	// and waited for, and the panic goes on with its own stack.
	ok := false
	defer func() {
		if !ok {
			r.finish(0, *new(T), nil, false, true, nil, 0)
			r.wait()
			r.flush() // the attempt's panic goes on; the observer's is dropped
		}
	}()
	start := p.stamp()
	v, err := next.Call(actx)
	accepted := p.accepts(v, err)
	ok = true
	r.finish(0, v, err, accepted, false, nil, p.took(start))
	v, err = r.result()
	p.recycle(r)
	return v, err
}

// reusable reports whether the record can serve another call: the call
// started no hedge (no goroutine of its own holds r), and its timer, armed
// once and never Reset since, was stopped before it fired (so its
// callback never ran and never will). r.mu must not be held; nothing
// else may hold it either.
func (r *race[T]) reusable() bool {
	return r.started == 1 && r.disarmed && !r.fired && !r.rearmed
}

// stamp returns the time now on p's clock if p measures its attempts'
// latencies (a quantile), else the zero Time: a start for took.
func (p *policy[T]) stamp() time.Time {
	if p.est == nil {
		return time.Time{}
	}
	return p.clock.Now()
}

// took returns the time since start, a stamp, or 0 if p measures no
// latencies.
func (p *policy[T]) took(start time.Time) time.Duration {
	if p.est == nil {
		return 0
	}
	return p.clock.Now().Sub(start)
}

// onTimer starts the next hedge, if the race still wants one.
func (r *race[T]) onTimer() {
	r.mu.Lock()
	r.fired = true
	launched := r.launchLocked()
	r.unlockAndReport(false, launched, 0, 0)
}

// unlockAndReport unlocks r.mu, cancels the attempts if stop, and reports,
// if the policy has an observer, hedge.launched for attempt launched,
// hedge.won for attempt won and hedge.losers_cancelled for cancelled
// losers (each if not 0), in that order, after every event decided
// before. An observer's panic is kept for the caller's goroutine
// (obsPanic). r.mu must be held.
func (r *race[T]) unlockAndReport(stop bool, launched, won, cancelled int) {
	if r.p.obs == nil || launched == 0 && won == 0 {
		r.mu.Unlock()
		if stop {
			r.cancel()
		}
		return
	}
	elapsed := r.p.clock.Now().Sub(r.start)
	r.emu.Lock()
	r.mu.Unlock()
	if stop {
		r.cancel() // the losers stop first: the observer does not hold them up
	}
	defer r.emu.Unlock()
	defer func() {
		if v := recover(); v != nil && r.obsPanic == nil {
			r.obsPanic = v
		}
	}()
	if launched != 0 {
		r.p.obs.Observe(telemetry.Event{Type: EventLaunched, Name: r.p.name, Attempt: launched, Elapsed: elapsed})
	}
	if won != 0 {
		r.p.obs.Observe(telemetry.Event{Type: EventWon, Name: r.p.name, Attempt: won, Elapsed: elapsed})
	}
	if cancelled != 0 {
		r.p.obs.Observe(telemetry.Event{Type: EventLosersCancelled, Name: r.p.name, Attempt: cancelled})
	}
}

// flush returns once every event decided so far has been reported (an
// event is decided under r.mu, and its emitter locks r.emu before
// unlocking r.mu), with the value of the observer's first panic, nil if
// none.
func (r *race[T]) flush() (obsPanic any) {
	if r.p.obs == nil {
		return nil
	}
	r.mu.Lock()
	r.emu.Lock()
	obsPanic = r.obsPanic
	r.emu.Unlock()
	r.mu.Unlock()
	return obsPanic
}

// launchLocked starts the next attempt in a goroutine of its own, unless
// the race is closed, the hedges are used up, or the caller's context
// ended; then re-arms or stops the timer. Before notBefore, it defers the
// attempt to it instead, on the timer. It returns the number of the
// attempt it started (2 for the first hedge), or 0 if it started none.
// r.mu must be held. Nothing here can panic: the count of hedges started,
// r.started-1, is compared with MaxHedges, never 1+MaxHedges.
func (r *race[T]) launchLocked() int {
	r.deferred = false
	if r.closed || r.hedges() == r.p.maxHedges || r.parent.Err() != nil {
		return 0
	}
	if r.hinted {
		if now := r.p.clock.Now(); now.Before(r.notBefore) {
			r.deferred = true
			if r.over == nil {
				r.over = make(chan struct{})
			}
			r.timer.Reset(r.notBefore.Sub(now))
			r.rearmed = true
			return 0
		}
		r.hinted = false
	}
	if r.p.budget != nil && !r.p.budget.withdraw() {
		r.closeLocked() // the budget is spent: this call starts no more attempts
		return 0
	}
	i := r.started
	r.started++
	r.running++
	if r.over == nil {
		r.over = make(chan struct{})
	}
	go r.hedge(i)
	if r.hedges() < r.p.maxHedges {
		r.timer.Reset(r.delay)
		r.rearmed = true
	} else {
		r.timer.Stop()
	}
	return i + 1
}

// pushBackLocked applies an attempt's error to the attempts to come. A
// refusal of an inner guard starts no more attempts, whatever its hint:
// the dependency was not called, so there is no slow call to race, and
// another attempt would be refused too (waiting out the refusal is the
// job of a retry outside the hedge). Else, if the error has a Retry-After
// hint, the next attempt starts no earlier than the hint from now (gRFC
// A6's rule for hedging under server pushback), and none starts after a
// hint that the policy does not wait for (longer than MaxWait, or
// "never") or one that ends at or after the caller's deadline. r.mu must
// be held.
func (r *race[T]) pushBackLocked(err error) {
	if errors.Is(err, resilience.ErrRefused) {
		r.closeLocked()
		return
	}
	d, ok := resilience.RetryAfter(err)
	if !ok || d <= 0 {
		return
	}
	if !r.p.waitsFor(d) {
		r.closeLocked()
		return
	}
	now := r.p.clock.Now()
	if deadline, has := r.parent.Deadline(); has && !now.Add(d).Before(deadline) {
		r.closeLocked()
		return
	}
	if t := now.Add(d); !r.hinted || t.After(r.notBefore) {
		r.notBefore = t
	}
	r.hinted = true
}

// closeLocked makes sure no attempt starts any more. r.mu must be held.
func (r *race[T]) closeLocked() {
	if !r.closed {
		r.closed = true
		r.disarmed = r.timer.Stop()
	}
	r.deferred = false
}

// settleLocked closes over once no attempt runs and none is deferred: no
// attempt can start after that. r.mu must be held.
func (r *race[T]) settleLocked() {
	if r.running == 0 && !r.deferred && r.over != nil && !r.settled {
		r.settled = true
		close(r.over)
	}
}

// hedges is the number of hedges started (attempts after the first).
// r.mu must be held.
func (r *race[T]) hedges() int { return r.started - 1 }

// hedge runs attempt i (i >= 1) and reports its outcome, panics included.
func (r *race[T]) hedge(i int) {
	ok := false
	defer func() {
		if !ok {
			r.finish(i, *new(T), nil, false, true, recover(), 0)
		}
	}()
	start := r.p.stamp()
	v, err := r.next.Call(r.ctx)
	accepted := r.p.accepts(v, err)
	ok = true
	r.finish(i, v, err, accepted, false, nil, r.p.took(start))
}

// finish records the outcome of attempt i, which ran for took (0 when
// the policy measures no latencies).
func (r *race[T]) finish(i int, v T, err error, accepted, panicked bool, panicVal any, took time.Duration) {
	r.mu.Lock()
	if r.p.est != nil && !panicked && (accepted || r.won) {
		// An accepted result's latency, or a loser's time until it was
		// cancelled: a lower bound of its latency.
		r.p.est.record(took)
	}
	r.running--
	stop := false
	launched, won, cancelled := 0, 0, 0
	switch {
	case panicked:
		if !r.panicked {
			r.panicked, r.panicVal = true, panicVal
		}
		stop = true
	case r.won || r.panicked:
		// The race is decided; a late result is dropped.
	case accepted:
		r.won, r.v, r.err = true, v, err
		stop = true
		if r.started > 1 { // the call hedged: report the winner and the losers still running
			won, cancelled = i+1, r.running
		}
	default:
		if err == nil {
			err = errRejected
		}
		r.v = v
		if r.failed == nil {
			r.failed = new(failures)
		}
		r.failed.add(i, err)
		r.pushBackLocked(err)
		launched = r.launchLocked() // a failure starts the next hedge at once, unless its error asks to wait
	}
	if stop {
		r.closeLocked()
	}
	r.settleLocked()
	r.unlockAndReport(stop, launched, won, cancelled)
}

// wait returns once every attempt started has finished and none is
// deferred. If the caller's context ends while an attempt is deferred, that
// attempt will not start.
func (r *race[T]) wait() {
	r.mu.Lock()
	over, busy := r.over, r.running > 0 || r.deferred
	r.mu.Unlock()
	if !busy {
		return
	}
	select {
	case <-over:
		return
	case <-r.parent.Done():
	}
	r.mu.Lock()
	r.closeLocked() // no attempt starts after the caller gave up
	r.settleLocked()
	r.mu.Unlock()
	<-over
}

// result waits for every attempt and returns the call's result. Once
// running is 0 and no attempt is deferred, no attempt can start: every
// finish that leaves running == 0 had its chance to launch or defer the
// next one.
func (r *race[T]) result() (T, error) {
	r.wait()
	obsPanic := r.flush()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closeLocked()
	switch {
	case r.panicked && r.panicVal == nil:
		runtime.Goexit()
	case r.panicked:
		panic(r.panicVal)
	case obsPanic != nil:
		panic(obsPanic)
	case r.won:
		return r.v, r.err
	}
	return r.v, &failedError{ctxErr: r.parent.Err(), errs: r.failed.kept(r.started), attempts: r.started}
}
