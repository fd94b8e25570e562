package resilienceredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
	"github.com/redis/go-redis/v9"
)

// Breaker is a circuit breaker whose state is shared by every instance of
// a fleet through Redis: it trips on failures counted across the fleet,
// and every instance then refuses calls until the cooldown has passed;
// then the fleet admits MaxTrials trial calls in all, and closes when
// SuccessThreshold of them succeed. See [BreakerConfig] for the rules and
// the package documentation ("Across a fleet") for what is guaranteed.
//
// While closed, a call makes no Redis round trip: admitting it reads one
// atomic word, and its outcome goes into the instance's batch, which is
// sent to Redis within FlushInterval (or as soon as it holds MaxBatch
// outcomes). Transitions happen in Redis, in scripts fenced by the
// generation, and reach every instance by pub/sub. Only a call that would
// be a half-open trial asks Redis, for at most Timeout. An instance that
// sees Threshold consecutive failures of its own refuses its calls at once,
// before its batch reaches Redis.
//
// When Redis is unreachable or slower than Timeout, the instance decides
// alone with a local breaker (a breaker.Breaker of the same rules) until
// Redis answers again, and then takes the shared state as it finds it.
//
// Use it through [BreakerPolicy], or with [Breaker.Allow] and the
// [Permit] it returns. A Breaker is safe for simultaneous use by multiple
// goroutines. It runs three goroutines (the flusher, the subscriber and
// the deliverer of transitions); [Breaker.Close] stops them. Create
// one with [NewBreaker]: the zero Breaker is not usable (its methods
// panic naming NewBreaker; its Close does nothing).
type Breaker struct {
	cfg     BreakerConfig // with defaults applied
	layer   string
	rem     remote
	keys    []string // the state's hash
	channel string
	id      string // this instance, in trial names
	rules   string // the fingerprint of the rules, compared across the fleet
	local   *breaker.Breaker
	base    time.Time    // the origin of the instance's times (monotonic)
	skew    atomic.Int64 // ns added to the instance's time; tests only

	// The view: the shared state as this instance knows it. word is
	// gen<<12 | inc<<4 | hold<<3 | down<<2 | state. inc counts (mod 256)
	// the times the view jumped to a state it did not expect (another
	// epoch, an older generation): outcomes counted for a view of another
	// inc are not of an older generation, and count in the new one. down
	// means Redis is unreachable and the local breaker decides. hold means
	// the instance saw Threshold consecutive failures alone and refuses
	// calls until deadline, whatever the shared state says. deadline is
	// the end of the cooldown while open or held, in ns since base.
	// Written under mu.
	word     atomic.Uint64
	deadline atomic.Int64
	mu       sync.Mutex
	ep       atomic.Int64 // the epoch of the shared state the view is of
	seq      uint64       // bumped by every change of the view
	contact  int64        // when Redis last answered, ns since base
	other    string       // another instance's rules, seen lately; "" if none

	batch  outcomes
	resets atomic.Uint64 // Reset calls of this instance: a batch counted before one is never sent again after it
	// The trials of this instance: asked for, and admitted (by name, with
	// when they were admitted, ns since base), at most MaxTrials in all;
	// an admitted trial that does not report leaves after TrialTimeout.
	trialMu  sync.Mutex
	asking   int
	admitted map[string]int64
	nextID   atomic.Uint64
	shift    atomic.Int64 // µs added to the server's time; tests only
	reports  chan report
	kick     chan struct{}

	events   []event // not yet delivered
	eventsMu sync.Mutex
	eventsC  chan struct{}

	// why is why the instance decides alone: the error of the round trip
	// that failed last; nil before any failed.
	why atomic.Pointer[reason]
	// The counts of Snapshot, since the breaker was made: calls refused,
	// and calls the local breaker decided.
	refused, localN atomic.Uint64

	ctx    context.Context
	cancel context.CancelFunc
	ps     *redis.PubSub // under mu
	wg     sync.WaitGroup
	closed atomic.Bool
}

// The view word.
const (
	stMask   = 3
	downBit  = 4
	holdBit  = 8
	incShift = 4
	incMask  = 0xff
	genShift = 12
)

func makeView(gen, inc uint64, st breaker.State, down bool) uint64 {
	w := gen<<genShift | (inc&incMask)<<incShift | uint64(st)
	if down {
		w |= downBit
	}
	return w
}

func viewState(w uint64) breaker.State { return breaker.State(w & stMask) }
func viewGen(w uint64) uint64          { return w >> genShift }
func viewInc(w uint64) uint64          { return w >> incShift & incMask }
func viewDown(w uint64) bool           { return w&downBit != 0 }
func viewHeld(w uint64) bool           { return w&holdBit != 0 }

// carries reports whether outcomes counted for the closed view from still
// count when the view is to: to is closed, Redis answers, and from is not
// an older generation of the same state (a view that has not learnt the
// state, or another epoch, or a generation the state went back from, is
// not older: its outcomes are recent, and count in the state there is).
func carries(from, to uint64) bool {
	if viewDown(to) || viewState(to) != breaker.Closed {
		return false
	}
	return viewGen(from) == 0 || viewInc(from) != viewInc(to) || viewGen(from) >= viewGen(to)
}

// outcomes is the batch of outcomes of calls admitted while closed, in one
// generation, not yet sent.
type outcomes struct {
	mu                          sync.Mutex
	word                        uint64 // the view the batch counts for
	ep                          int64
	succ, fail, slow            uint64
	lead, run, cur              uint64 // failures before the first success, longest run, current run
	n                           int
	streak                      int    // the instance's consecutive failures in this generation, across batches
	sent, dropped, flushes, bad uint64 // outcomes sent, dropped, refused by the fence (bad); flushes
	fenced                      uint64 // batches refused by the fence
}

// report is a trial's outcome, for the background goroutine to send.
type report struct {
	word   uint64
	ep     int64
	member string
	o      int // 0 success, 1 failure or slow, 2 ignored
}

// NewBreaker returns the fleet-wide breaker named name on rdb, configured
// by opts; with no options, the breaker of [BreakerConfig]{}: it trips
// after 5 consecutive failures across the fleet, stays open 30s, then
// admits one trial call, fleet-wide. Every instance that builds a breaker
// of the same name and prefix on the same Redis shares its state (build
// them with the same rules: [Breaker.RulesMismatch] reports instances that
// do not). NewBreaker does not wait for Redis: the
// instance starts closed, and learns the shared state within
// FlushInterval.
//
// NewBreaker panics if rdb is nil (or a nil pointer, such as a nil
// *redis.Client), if name is empty, not valid UTF-8 or holds '{' or '}',
// if an option is nil, or if the configuration is invalid (see
// [BreakerConfig.Validate]), with a message naming the constructor or the
// field and the value.
//
// The name is positional, and there is no WithName: it is required, the
// identity of the state the fleet shares (the rule of every constructor
// here: a required value is positional, an optional one is an option).
func NewBreaker(rdb redis.UniversalClient, name string, opts ...BreakerOption) *Breaker {
	b := newBreaker(rdb, name, opts)
	b.start()
	return b
}

// newBreaker returns the breaker without its goroutines (tests drive it).
func newBreaker(rdb redis.UniversalClient, name string, opts []BreakerOption) *Breaker {
	checkClient("NewBreaker", rdb)
	checkName("NewBreaker", name)
	cfg := BreakerConfig{Name: name}
	for i, o := range opts {
		checkOption("NewBreaker", i, o == nil)
		o.applyBreaker(&cfg)
	}
	checkPositional("NewBreaker", fmt.Sprintf("rdb, %q, ...", name), "WithBreakerConfig", "Name", cfg.Name, name)
	if err := cfg.validate(true); err != nil {
		panic(err.Error())
	}
	cfg = cfg.withDefaults()
	prefix := cfg.Prefix
	key := prefix + "br:{" + cfg.Name + "}"
	var id [8]byte
	rand.Read(id[:])
	b := &Breaker{
		cfg:     cfg,
		layer:   "breaker(" + cfg.Name + ")",
		rem:     newRemote(rdb, cfg.Timeout, cfg.ProbeInterval),
		keys:    []string{key},
		channel: key,
		id:      hex.EncodeToString(id[:]),
		rules:   cfg.fingerprint(),
		base:    time.Now(),
		reports: make(chan report, cfg.MaxTrials+1),
		kick:    make(chan struct{}, 1),
		eventsC: make(chan struct{}, 1),
	}
	b.local = breaker.New(localOptions(cfg, b.onLocalChange)...)
	b.rem.reprobe = b.probeDue // read the state at the next tick
	b.word.Store(makeView(0, 0, breaker.Closed, false))
	b.batch.word = b.word.Load()
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.rem.stop = b.ctx.Done()
	return b
}

// withDefaults returns c with every zero field set to its default.
func (c BreakerConfig) withDefaults() BreakerConfig {
	if c.Prefix == "" {
		c.Prefix = defaultPrefix
	}
	if c.Threshold == 0 {
		c.Threshold = defaultThreshold
	}
	if c.WindowDuration == 0 {
		c.WindowDuration = defaultWindow
	}
	if c.WindowBuckets == 0 {
		c.WindowBuckets = defaultBuckets
	}
	if c.MinCalls == 0 {
		c.MinCalls = defaultMinCalls
	}
	if c.Cooldown == 0 {
		c.Cooldown = defaultCooldown
	}
	if c.TrialTimeout == 0 {
		c.TrialTimeout = c.Cooldown
	}
	c.MaxTrials = max(c.MaxTrials, 1)
	c.SuccessThreshold = max(c.SuccessThreshold, 1)
	if c.Classify == nil {
		c.Classify = breaker.DefaultClassify
	}
	c.Timeout = cmp0(c.Timeout, defaultTimeout)
	c.FlushInterval = cmp0(c.FlushInterval, defaultFlushInterval)
	if c.MaxBatch == 0 {
		c.MaxBatch = defaultMaxBatch
	}
	c.ProbeInterval = cmp0(c.ProbeInterval, defaultProbe)
	return c
}

// localOptions are the options of the local breaker: the same rules. They
// go through a breaker.Config, whose zero fields mean policy/breaker's
// defaults, as they do in BreakerConfig (an option given 0 panics).
func localOptions(c BreakerConfig, onChange func(breaker.Transition)) []breaker.Option {
	return []breaker.Option{breaker.WithConfig(breaker.Config{
		Name:             c.Name,
		Threshold:        c.Threshold, // 0 (the default rule) and Off mean the same as in policy/breaker
		FailureRatio:     c.FailureRatio,
		SlowCallRatio:    c.SlowCallRatio,
		SlowCall:         c.SlowCall,
		WindowDuration:   c.WindowDuration,
		WindowBuckets:    c.WindowBuckets,
		MinCalls:         c.MinCalls,
		Cooldown:         c.Cooldown,
		TrialTimeout:     c.TrialTimeout,
		MaxTrials:        c.MaxTrials,
		SuccessThreshold: c.SuccessThreshold,
		Classify:         c.Classify,
		OnStateChange:    onChange,
	})}
}

// Name returns the breaker's name.
func (b *Breaker) Name() string {
	if b.keys == nil {
		zeroValue("Breaker", "Name", "NewBreaker")
	}
	return b.cfg.Name
}

// now returns the instance's time: ns since it was created (monotonic).
func (b *Breaker) now() int64 { return int64(time.Since(b.base)) + b.skew.Load() }

// fingerprint is the rules of c that the fleet must share, as text.
func (c BreakerConfig) fingerprint() string {
	return fmt.Sprintf("threshold=%d failureRatio=%g slowCallRatio=%g slowCall=%v window=%v buckets=%d minCalls=%d cooldown=%v trialTimeout=%v maxTrials=%d successThreshold=%d",
		c.Threshold, c.FailureRatio, c.SlowCallRatio, c.SlowCall, c.WindowDuration, c.WindowBuckets, c.MinCalls, c.Cooldown, c.TrialTimeout, c.MaxTrials, c.SuccessThreshold)
}

// State returns the breaker's state as this instance knows it: the shared
// state as last learnt (an open breaker whose cooldown has passed reads
// [breaker.HalfOpen]: the next call would be a trial), or, while Redis is
// unreachable, the local breaker's (or Open, while a cooldown learnt from
// Redis before it became unreachable has not passed). While the instance
// holds its calls after Threshold consecutive failures of its own, State
// is Open; that hold is not a transition of the shared state, and
// OnStateChange does not report it.
func (b *Breaker) State() breaker.State {
	if b.keys == nil {
		zeroValue("Breaker", "State", "NewBreaker")
	}
	return b.visible(b.word.Load())
}

// reported is the state of view w as transitions report it: the shared
// state, or while Redis is unreachable the local breaker's (unless a
// cooldown learnt from Redis still holds). Unlike State, it does not read
// an open breaker past its cooldown as half-open: the fleet's half-open
// state is a generation of its own, made in Redis and reported when it
// comes.
func (b *Breaker) reported(w uint64) breaker.State {
	if viewDown(w) && !(viewState(w) == breaker.Open && b.now() < b.deadline.Load()) {
		return b.local.State()
	}
	return viewState(w)
}

// visible is the state of view w as State reports it.
func (b *Breaker) visible(w uint64) breaker.State {
	open := viewState(w) == breaker.Open
	switch {
	case (open || viewHeld(w)) && b.now() < b.deadline.Load():
		return breaker.Open
	case viewDown(w):
		return b.local.State()
	case open:
		return breaker.HalfOpen
	}
	return viewState(w)
}

// Permit is the breaker's admission of one call, from [Breaker.Allow].
// The caller makes the call and then reports its outcome exactly once
// with [Permit.Done] or [Permit.Report]; only the first report counts. A
// report is ignored when the shared state has changed generation since the
// permit was issued. A Permit must not be copied (go vet reports copies);
// the Permit returned with a refusal, like the zero Permit, reports
// nothing. A Permit is not safe for simultaneous use; the breaker is.
type Permit struct {
	_      noCopy
	b      *Breaker
	word   uint64 // the view when the call was admitted
	ep     int64
	start  int64  // when the call was admitted (ns since base), if slow calls count
	member string // the trial's name, for a half-open trial
	local  *breaker.Permit
	done   bool
}

// Allow asks to make one call. If the breaker admits it, Allow returns a
// [Permit] and a nil error; otherwise a Permit that reports nothing and a
// *resilience.RefusedError matching breaker.ErrOpen or
// breaker.ErrTooManyTrials (and resilience.ErrRefused), whose RetryAfter
// is the rest of the cooldown for ErrOpen, rounded up to a millisecond.
//
// While closed, Allow reads one atomic word and allocates nothing. A call
// that would be a half-open trial asks Redis for a trial fleet-wide, for at
// most Timeout; the instance asks for at most MaxTrials at once, and
// refuses the calls beyond them without asking.
func (b *Breaker) Allow() (Permit, error) {
	w := b.word.Load()
	if w&(holdBit|downBit|stMask) == 0 { // closed, Redis reachable, not held
		if b.keys == nil {
			zeroValue("Breaker", "Allow", "NewBreaker")
		}
		var start int64
		if b.cfg.SlowCall > 0 {
			start = b.now()
		}
		return Permit{b: b, word: w, start: start}, nil
	}
	a, err := b.allowSlow(w)
	if err != nil {
		b.refused.Add(1)
		return Permit{}, err // reports nothing
	}
	return Permit{b: b, word: a.word, ep: a.ep, start: a.start, member: a.member, local: a.local}, err
}

type admission struct {
	word   uint64
	ep     int64
	start  int64
	member string
	local  *breaker.Permit
}

func (b *Breaker) allowSlow(w uint64) (admission, error) {
	now := b.now()
	if viewState(w) == breaker.Open {
		if d := b.deadline.Load(); now < d {
			return admission{}, resilience.Refuse(breaker.ErrOpen, b.cfg.Name, ceilMillis(time.Duration(d-now)))
		}
	}
	if viewHeld(w) {
		if d := b.deadline.Load(); now < d {
			return admission{}, resilience.Refuse(breaker.ErrOpen, b.cfg.Name, ceilMillis(time.Duration(d-now)))
		}
		w = b.release(w)
	}
	if viewDown(w) {
		return b.allowLocal()
	}
	if viewState(w) == breaker.Closed { // measured call, or a view that just closed
		return admission{word: w, start: now}, nil
	}
	// Open past its cooldown, or half-open: a trial, if the fleet has one
	// to give.
	if !b.askTrial(now) {
		return admission{}, resilience.Refuse(breaker.ErrTooManyTrials, b.cfg.Name, -1)
	}
	member := b.id + ":" + strconv.FormatUint(b.nextID.Add(1), 10)
	st, err := b.call(b.ctx, acquireScript, member, b.cfg.MaxTrials)
	if err != nil {
		b.endTrial("", false)
		b.goDown(err)
		return b.allowLocal()
	}
	switch st.verdict {
	case 2:
		b.endTrial(member, true)
		// The trial is of the generation and epoch Redis admitted it in,
		// which the view may have passed during the round trip (a newer
		// state published meanwhile): its report is fenced by them.
		w := makeView(st.gen, viewInc(st.word), breaker.HalfOpen, false)
		return admission{word: w, ep: st.ep, start: b.now(), member: member}, nil
	case 1: // closed meanwhile
		b.endTrial("", false)
		return admission{word: st.word, ep: st.ep, start: b.now()}, nil
	}
	b.endTrial("", false)
	if st.state == breaker.Open {
		return admission{}, resilience.Refuse(breaker.ErrOpen, b.cfg.Name, ceilMillis(st.remaining))
	}
	return admission{}, resilience.Refuse(breaker.ErrTooManyTrials, b.cfg.Name, ceilMillis(st.remaining))
}

// askTrial reserves one of the instance's MaxTrials trials, if one is
// free at now, for a call that asks Redis for a trial.
func (b *Breaker) askTrial(now int64) bool {
	b.trialMu.Lock()
	defer b.trialMu.Unlock()
	for m, at := range b.admitted {
		if now-at > int64(b.cfg.TrialTimeout) {
			delete(b.admitted, m) // expired, fleet-wide too
		}
	}
	if b.asking+len(b.admitted) >= b.cfg.MaxTrials {
		return false
	}
	b.asking++
	return true
}

// endTrial ends a reservation of askTrial: the trial member was admitted
// (and holds its place until it reports), or not.
func (b *Breaker) endTrial(member string, admitted bool) {
	b.trialMu.Lock()
	defer b.trialMu.Unlock()
	b.asking--
	if admitted {
		if b.admitted == nil {
			b.admitted = map[string]int64{}
		}
		b.admitted[member] = b.now()
	}
}

// allowLocal asks the local breaker, while Redis is unreachable.
func (b *Breaker) allowLocal() (admission, error) {
	b.localN.Add(1)
	lp := new(breaker.Permit)
	var err error
	*lp, err = b.local.Allow()
	if err != nil {
		return admission{}, err
	}
	return admission{local: lp}, nil
}

// ceilMillis rounds d up to a whole millisecond (at least 0).
func ceilMillis(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return (d + time.Millisecond - 1).Truncate(time.Millisecond)
}

// Done reports the outcome of the call from its error: nil is a success,
// any other error is classified by Classify (by default
// breaker.DefaultClassify); a call longer than SlowCall is also slow.
func (p *Permit) Done(err error) {
	p.finish(context.Background(), err, false, 0)
}

// Report reports the outcome of the call as o, without classifying an
// error. It panics if o is not breaker.Success, Failure or Ignored.
func (p *Permit) Report(o breaker.Outcome) {
	if o > breaker.Ignored {
		panic("resilienceredis: Report outcome must be Success, Failure or Ignored, got " + o.String())
	}
	p.finish(context.Background(), nil, true, o)
}

func (p *Permit) finish(ctx context.Context, err error, given bool, o breaker.Outcome) {
	if p.b == nil || p.done {
		return
	}
	p.done = true
	if given {
		p.settle(o)
		return
	}
	settled := false
	defer func() {
		if !settled { // Classify panicked: release what the permit holds
			p.settle(breaker.Ignored)
		}
	}()
	o = p.b.outcome(ctx, err)
	settled = true
	p.settle(o)
}

// settle applies outcome o of p's call.
func (p *Permit) settle(o breaker.Outcome) {
	b := p.b
	if p.local != nil {
		p.local.Report(o) // the local breaker measures a slow call itself
		return
	}
	slow := b.cfg.SlowCall > 0 && b.now()-p.start > int64(b.cfg.SlowCall)
	if p.member != "" {
		b.trialMu.Lock()
		delete(b.admitted, p.member)
		b.trialMu.Unlock()
		code := 0
		switch {
		case o == breaker.Ignored:
			code = 2
		case o == breaker.Failure || slow:
			code = 1
		}
		select {
		case b.reports <- report{word: p.word, ep: p.ep, member: p.member, o: code}:
		default: // cannot happen: at most MaxTrials trials are out
		}
		return
	}
	if o != breaker.Ignored {
		b.record(p.word, o == breaker.Failure, slow)
	}
}

// outcome is what a call's non-nil error says, as in policy/breaker: the
// caller's own cancellation is never the dependency's failure.
func (b *Breaker) outcome(ctx context.Context, err error) breaker.Outcome {
	switch {
	case err == nil:
		return breaker.Success
	case err == errPanicked:
		return breaker.Failure
	case errors.Is(ctx.Err(), context.Canceled):
		return breaker.Ignored
	}
	o := b.cfg.Classify(err)
	if o > breaker.Ignored {
		panic(fmt.Sprintf("resilienceredis: Classify outcome must be Success, Failure or Ignored, got %d (for error %q)", o, err))
	}
	return o
}

var errPanicked = errors.New("resilienceredis: the call panicked")

// record adds an outcome of a call admitted while closed with view w to
// the batch, unless the view has since moved to a newer generation (or is
// no longer closed): outcomes of an older generation are dropped, those of
// a view that was only refreshed count in the view there is. An instance
// that sees Threshold consecutive failures of its own holds its calls at
// once (see hold) and sends its batch.
func (b *Breaker) record(w uint64, failure, slow bool) {
	q := &b.batch
	q.mu.Lock()
	cur := b.word.Load() &^ holdBit
	if w &^= holdBit; cur != w && !carries(w, cur) {
		q.dropped++
		q.mu.Unlock()
		return
	}
	if q.word != cur {
		if carries(q.word, cur) {
			q.word, q.ep = cur, b.ep.Load() // the batch counts in the view there is
		} else {
			q.dropped += uint64(q.n)
			q.reset(cur, b.ep.Load())
			q.streak = 0
		}
	}
	trip := false
	if failure {
		q.fail++
		q.cur++
		if q.succ == 0 {
			q.lead = q.cur
		}
		q.run = max(q.run, q.cur)
		if q.streak++; b.cfg.Threshold > 0 && q.streak >= b.cfg.Threshold {
			q.streak = 0
			trip = true
		}
	} else {
		q.succ++
		q.cur = 0
		q.streak = 0
	}
	if slow {
		q.slow++
	}
	q.n++
	full := q.n >= b.cfg.MaxBatch
	q.mu.Unlock()
	if trip {
		b.hold(cur)
	}
	if full || trip {
		select {
		case b.kick <- struct{}{}:
		default:
		}
	}
}

// hold makes the instance refuse its calls for Cooldown, at once, if its
// view is still w: it saw Threshold consecutive failures of its own. The
// batch that holds them trips the fleet when it reaches Redis; the hold
// ends with the Cooldown, or when the view moves to another generation or
// epoch (the fleet's trip, a Reset).
func (b *Breaker) hold(w uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur := b.word.Load()
	if cur&^holdBit != w {
		return
	}
	b.deadline.Store(b.now() + int64(b.cfg.Cooldown))
	b.word.Store(cur | holdBit)
	b.seq++
}

// release ends the hold of view w, whose deadline has passed, and returns
// the view.
func (b *Breaker) release(w uint64) uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur := b.word.Load()
	if cur == w {
		cur &^= holdBit
		b.word.Store(cur)
		b.seq++
	}
	return cur
}

func (q *outcomes) reset(w uint64, ep int64) {
	q.word, q.ep = w, ep
	q.succ, q.fail, q.slow, q.lead, q.run, q.cur, q.n = 0, 0, 0, 0, 0, 0, 0
}

// noCopy makes go vet's copylocks check report copies of a Permit.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// newEpoch returns a random epoch, for a state this instance may create:
// in [1, 2^53), exact in Lua's numbers too.
func newEpoch() string { return strconv.FormatInt(mrand.Int64N(1<<53-1)+1, 10) }

// shared is a script's reply: the shared state and the verdict.
type shared struct {
	ep        int64
	gen       uint64
	state     breaker.State
	remaining time.Duration
	verdict   int64
	word      uint64 // the view adopted from it
}

// call runs script with the common arguments and extra ones, bounded by
// Timeout, and adopts the state it replies.
func (b *Breaker) call(ctx context.Context, s *redis.Script, extra ...any) (shared, error) {
	args := make([]any, 0, 7+len(extra))
	horizon := 3 * (b.cfg.ProbeInterval + b.cfg.FlushInterval)
	args = append(args, b.channel, b.cfg.Cooldown.Microseconds(), b.cfg.TrialTimeout.Microseconds(), b.shift.Load(),
		newEpoch(), b.rules, horizon.Microseconds())
	args = append(args, extra...)
	b.mu.Lock()
	seq := b.seq
	b.mu.Unlock()
	at := b.now()
	v, err := b.rem.run(ctx, s, b.keys, args)
	if err != nil {
		return shared{}, classify(err)
	}
	r, ok := v.([]any)
	if !ok || len(r) != 6 {
		return shared{}, fmt.Errorf("resilienceredis: unexpected reply %v", v)
	}
	var n [5]int64
	for i := range n {
		switch x := r[i].(type) {
		case int64:
			n[i] = x
		case string:
			n[i], _ = strconv.ParseInt(x, 10, 64)
		}
	}
	rules, _ := r[5].(string)
	b.noteRules(rules)
	st := shared{ep: n[0], gen: uint64(n[1]), state: breaker.State(n[2]), remaining: time.Duration(n[3]) * time.Microsecond, verdict: n[4]}
	st.word = b.adopt(st.ep, st.gen, st.state, st.remaining, at, int64(seq))
	return st, nil
}

// adopt makes the view the shared state (ep, gen, st), with remaining
// left of a cooldown as of at, if it is newer than the view: a later
// generation of the same epoch, or another epoch. seq is the view's seq
// when the round trip that replied this state started, or -1 for a state
// published: a reply to a round trip started after the view was last
// changed is the shared state as it is now, newer than anything the view
// holds, and is taken whatever it says (the state may have gone back in
// time: an older snapshot, a replica that was behind). A reply also ends
// a decision alone (Redis answers again). It returns the view.
func (b *Breaker) adopt(ep int64, gen uint64, st breaker.State, remaining time.Duration, at int64, seq int64) uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.word.Load()
	up := seq >= 0
	if up {
		b.contact = b.now()
	}
	fresh := up && uint64(seq) == b.seq // nothing changed the view during the round trip
	same := ep == b.ep.Load()
	inc := viewInc(w)
	switch {
	case same && gen > viewGen(w): // a later generation
	case !same && (fresh || !up || b.ep.Load() == 0): // another epoch
		inc++
	case same && fresh && (gen != viewGen(w) || st != viewState(w)): // the state went back
		inc++
	default:
		if up && viewDown(w) && !b.closed.Load() {
			b.setView(w, w&^downBit)
		}
		return b.word.Load()
	}
	b.ep.Store(ep)
	if st == breaker.Open {
		b.deadline.Store(at + int64(remaining))
	}
	nw := makeView(gen, inc, st, viewDown(w) && (!up || b.closed.Load()))
	b.setView(w, nw)
	return nw
}

// setView changes the view from w to nw, under mu, and reports the
// transition.
func (b *Breaker) setView(w, nw uint64) {
	from := b.reported(w)
	b.word.Store(nw)
	b.seq++
	if to := b.reported(nw); from != to && b.cfg.OnStateChange != nil {
		b.emit(event{t: breaker.Transition{Name: b.cfg.Name, From: from, To: to, Generation: viewGen(nw), At: time.Now()}})
	}
}

// noteRules records the rules of another instance that a script reported
// ("" for none), and reports a change to OnRulesMismatch.
func (b *Breaker) noteRules(other string) {
	b.mu.Lock()
	changed := other != b.other
	b.other = other
	b.mu.Unlock()
	if changed && other != "" && b.cfg.OnRulesMismatch != nil {
		b.emit(event{mismatch: b.mismatchErr(other)})
	}
}

// ErrRulesMismatch is the condition of instances that share a breaker's
// state (the same Name and Prefix on one Redis) with different rules
// (Threshold, ratios, SlowCall, window, MinCalls, Cooldown, TrialTimeout,
// MaxTrials, SuccessThreshold). See [Breaker.RulesMismatch].
var ErrRulesMismatch = errors.New("resilienceredis: instances share a breaker with different rules")

func (b *Breaker) mismatchErr(other string) error {
	return fmt.Errorf("%w: breaker %q: this instance's rules are [%s], another instance's [%s]", ErrRulesMismatch, b.cfg.Name, b.rules, other)
}

// RulesMismatch returns nil while every instance this one hears of through
// Redis shares its rules, or an error matching [ErrRulesMismatch] that
// names both sets of rules, when an instance with other rules has used the
// shared state lately (within three times ProbeInterval plus
// FlushInterval, as of this instance's last round trip). The instances
// share one state whatever their rules: each applies its own rules to
// what it sends (a batch trips on the Threshold of the instance that sent
// it), so the fleet's behaviour is a mix of both. RulesMismatch is safe
// for simultaneous use.
func (b *Breaker) RulesMismatch() error {
	if b.keys == nil {
		zeroValue("Breaker", "RulesMismatch", "NewBreaker")
	}
	b.mu.Lock()
	other := b.other
	b.mu.Unlock()
	if other == "" {
		return nil
	}
	return b.mismatchErr(other)
}

// goDown makes the instance decide locally: Redis did not answer, err
// says why. The local breaker starts afresh; a cooldown learnt from Redis
// still holds. The change is reported to the Observer as BreakerLocal.
func (b *Breaker) goDown(err error) {
	if b.closed.Load() {
		return // Close makes the instance local, for good
	}
	b.why.Store(&reason{err})
	b.rem.reload(time.Now().UnixNano())
	b.mu.Lock()
	w := b.word.Load()
	if viewDown(w) {
		b.mu.Unlock()
		return
	}
	b.local.Reset()
	b.setView(w, w|downBit)
	b.mu.Unlock()
	if o := b.cfg.Observer; o != nil {
		o.Observe(telemetry.Event{Type: BreakerLocal, Name: b.cfg.Name, Err: err})
	}
	b.batch.mu.Lock()
	b.batch.dropped += uint64(b.batch.n)
	b.batch.reset(0, 0)
	b.batch.mu.Unlock()
}

// onLocalChange forwards the local breaker's transitions while it decides.
// It may run with b.mu held (a State of the local breaker delivers its
// due transitions), so it takes only the events' lock.
func (b *Breaker) onLocalChange(t breaker.Transition) {
	if viewDown(b.word.Load()) && b.cfg.OnStateChange != nil {
		b.emit(event{t: t})
	}
}

// event is a transition for OnStateChange, or a mismatch of rules for
// OnRulesMismatch.
type event struct {
	t        breaker.Transition
	mismatch error
}

// emit queues e for the deliverer.
func (b *Breaker) emit(e event) {
	b.eventsMu.Lock()
	b.events = append(b.events, e)
	b.eventsMu.Unlock()
	select {
	case b.eventsC <- struct{}{}:
	default:
	}
}

// Reset closes the shared breaker, fleet-wide, in a new generation: counts
// start from zero and outstanding permits report nothing; every instance
// learns it by pub/sub. The outcomes this instance counted but had not yet
// sent are dropped, never sent into the new generation (another
// instance's batch in flight at the same moment may still count in it). It
// waits on Redis at most Timeout (and not beyond ctx), and returns
// ctx.Err(), the client's error, one matching [ErrUnusable] when Redis
// refuses the breaker's commands, or an error saying that Redis did not
// answer in time; after Close, [ErrClosed] without asking Redis.
func (b *Breaker) Reset(ctx context.Context) error {
	if b.keys == nil {
		zeroValue("Breaker", "Reset", "NewBreaker")
	}
	if b.closed.Load() {
		return ErrClosed
	}
	q := &b.batch
	q.mu.Lock()
	b.resets.Add(1)
	q.dropped += uint64(q.n)
	q.reset(q.word, q.ep)
	q.mu.Unlock()
	_, err := b.call(ctx, resetScript)
	return err
}

// Close makes the breaker decide locally for good, as while Redis is
// unreachable: it stops the breaker's goroutines, waits for Redis round
// trips in flight to end (a round trip that outlived Timeout ends when the
// client gives it up), drops the outcomes not yet sent, and hands every
// later call to the local breaker, which starts closed (a cooldown learnt
// from Redis still holds), as when Redis does not answer. Close emits one
// BreakerLocal event whose Err is [ErrClosed]; the snapshot's Reason is
// then ErrClosed's message and its value "local" is 1. After Close the
// breaker asks Redis nothing: Reset and Shared return ErrClosed, and
// OnStateChange and OnRulesMismatch are no longer called (the local
// breaker's transitions are not delivered). It does not close rdb. Close
// returns nil; calling it again does nothing.
func (b *Breaker) Close() error {
	if b.keys == nil || b.closed.Swap(true) {
		return nil
	}
	b.cancel()
	b.mu.Lock()
	ps := b.ps
	b.mu.Unlock()
	if ps != nil {
		ps.Close()
	}
	b.wg.Wait()
	b.rem.wg.Wait()
	b.why.Store(&reason{ErrClosed})
	b.mu.Lock()
	if w := b.word.Load(); !viewDown(w) {
		b.local.Reset()
		b.setView(w, w|downBit)
	}
	b.mu.Unlock()
	b.batch.mu.Lock()
	b.batch.dropped += uint64(b.batch.n)
	b.batch.reset(0, 0)
	b.batch.mu.Unlock()
	if o := b.cfg.Observer; o != nil {
		o.Observe(telemetry.Event{Type: BreakerLocal, Name: b.cfg.Name, Err: ErrClosed})
	}
	return nil
}

// start runs the breaker's goroutines: the flusher, the subscriber and the
// deliverer of transitions.
func (b *Breaker) start() {
	b.wg.Add(3)
	go b.flushLoop()
	go b.subscribeLoop()
	go b.deliverLoop()
}

func (b *Breaker) flushLoop() {
	defer b.wg.Done()
	t := time.NewTicker(b.cfg.FlushInterval)
	defer t.Stop()
	b.sync() // learn the shared state at once
	for {
		select {
		case <-b.ctx.Done():
			return
		case r := <-b.reports:
			b.sendReport(r)
			continue
		case <-t.C:
		case <-b.kick:
		}
		b.tick()
	}
}

// tick is one turn of the flusher: send the batch, or read the state if
// the instance has sent nothing for ProbeInterval (or Redis is down).
func (b *Breaker) tick() {
	if viewDown(b.word.Load()) {
		b.mu.Lock()
		due := b.now()-b.contact >= int64(b.cfg.ProbeInterval)
		b.mu.Unlock()
		if due {
			b.mu.Lock()
			b.contact = b.now() // one probe per interval
			b.mu.Unlock()
			b.sync()
		}
		return
	}
	if !b.flush() {
		b.mu.Lock()
		due := b.now()-b.contact >= int64(b.cfg.ProbeInterval)
		b.mu.Unlock()
		if due {
			b.sync()
		}
	}
}

// probeDue makes the next tick read the shared state, whatever the time
// since Redis last answered: a pub/sub message may have been missed.
func (b *Breaker) probeDue() {
	b.mu.Lock()
	b.contact = b.now() - int64(b.cfg.ProbeInterval) // not 0: the instance's clock starts at 0
	b.mu.Unlock()
}

// sync reads the shared state.
func (b *Breaker) sync() {
	if _, err := b.call(b.ctx, readScript); err != nil && b.ctx.Err() == nil {
		b.goDown(err)
	}
}

// flush sends the batch, if it holds anything, and reports whether it did.
// A batch the script refuses because the state is not the one it was
// counted for is sent again, once, for the state replied, if that state
// is not a newer generation of the batch's (carries): the state vanished
// and was created again, or went back in time.
func (b *Breaker) flush() bool {
	q := &b.batch
	q.mu.Lock()
	if q.n == 0 {
		q.mu.Unlock()
		return false
	}
	w, ep := q.word, q.ep
	counts := []any{q.succ, q.fail, q.slow, q.lead, q.run, q.cur}
	n := q.n
	q.reset(w, ep)
	q.flushes++
	resets := b.resets.Load()
	q.mu.Unlock()
	c := &b.cfg
	threshold := max(c.Threshold, 0)
	width := max(c.WindowDuration.Microseconds()/int64(c.WindowBuckets), 1)
	rules := []any{threshold, c.FailureRatio, c.SlowCallRatio, c.MinCalls, width, c.WindowBuckets}
	var verdict int64
	var err error
	for range 2 {
		args := append(append([]any{viewGen(w), ep}, counts...), rules...)
		var st shared
		st, err = b.call(b.ctx, flushScript, args...)
		if err != nil || st.verdict == 1 {
			verdict = st.verdict
			break
		}
		nw := b.word.Load() &^ holdBit
		if nw == w || !carries(w, nw) || b.resets.Load() != resets {
			break // a Reset by this instance drops what it counted before
		}
		w, ep = nw, b.ep.Load()
	}
	q.mu.Lock()
	switch {
	case err != nil:
		q.dropped += uint64(n)
	case verdict == 1:
		q.sent += uint64(n)
	default:
		q.bad += uint64(n)
		q.fenced++
	}
	q.mu.Unlock()
	if err != nil && b.ctx.Err() == nil {
		b.goDown(err)
	}
	if o := b.cfg.Observer; o != nil && err == nil && verdict != 1 {
		o.Observe(telemetry.Event{Type: BreakerFenced, Name: b.cfg.Name,
			Err: fmt.Errorf("%w: %d outcomes counted for generation %d", ErrFenced, n, viewGen(w))})
	}
	return true
}

// sendReport sends a trial's outcome.
func (b *Breaker) sendReport(r report) {
	_, err := b.call(b.ctx, reportScript, viewGen(r.word), r.ep, r.member, r.o, b.cfg.SuccessThreshold)
	if err != nil && b.ctx.Err() == nil {
		b.goDown(err)
	}
}

func (b *Breaker) subscribeLoop() {
	defer b.wg.Done()
	ps := b.rem.rdb.Subscribe(b.ctx, b.channel)
	defer ps.Close()
	b.mu.Lock()
	b.ps = ps
	closing := b.ctx.Err() != nil // Close ran before ps was there to close
	b.mu.Unlock()
	if closing {
		return
	}
	for b.ctx.Err() == nil {
		msg, err := ps.Receive(b.ctx)
		if err != nil {
			// Redis is unreachable (the client reconnects on the next
			// Receive), or the breaker is closing.
			select {
			case <-b.ctx.Done():
				return
			case <-time.After(b.cfg.FlushInterval):
			}
			continue
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			// (Re)subscribed: messages may have been missed until now.
			// Read the state at once (the probe is made due before the
			// kick, so that the tick the kick starts makes it).
			b.probeDue()
			select {
			case b.kick <- struct{}{}:
			default:
			}
		case *redis.Message:
			b.receive(m.Payload)
		}
	}
}

// receive adopts a published state "ep gen st remaining-µs".
func (b *Breaker) receive(payload string) {
	f := strings.Fields(payload)
	if len(f) != 4 {
		return
	}
	var n [4]int64
	for i := range n {
		var err error
		if n[i], err = strconv.ParseInt(f[i], 10, 64); err != nil {
			return
		}
	}
	b.adopt(n[0], uint64(n[1]), breaker.State(n[2]), time.Duration(n[3])*time.Microsecond, b.now(), -1)
}

func (b *Breaker) deliverLoop() {
	defer b.wg.Done()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-b.eventsC:
		}
		b.eventsMu.Lock()
		ev := b.events
		b.events = nil
		b.eventsMu.Unlock()
		for _, e := range ev {
			if e.mismatch != nil {
				b.cfg.OnRulesMismatch(e.mismatch)
			} else {
				b.cfg.OnStateChange(e.t)
			}
		}
	}
}

// BreakerPolicy returns b as a layer of a resilience.Policy[T], named
// "breaker(Name)", as breaker.Policy does for a local breaker: each call
// asks b for a permit; a refusal returns b's *resilience.RefusedError
// without running the rest of the chain; otherwise the rest of the chain
// runs and its outcome is reported: success for a nil error, ignored when
// the caller's ctx was canceled, otherwise as Classify says; a panic counts
// as a failure and goes on unchanged. A call whose ctx is already done
// returns ctx.Err() at once. One breaker may back policies of several
// result types. BreakerPolicy panics if b is nil.
func BreakerPolicy[T any](b *Breaker) resilience.Policy[T] {
	if b == nil {
		panic("resilienceredis: BreakerPolicy breaker must not be nil")
	}
	if b.keys == nil {
		zeroArg("BreakerPolicy", "Breaker", "NewBreaker")
	}
	return resilience.New(b.layer, func(ctx context.Context, next resilience.Next[T]) (v T, err error) {
		if err = ctx.Err(); err != nil {
			return v, err
		}
		p, err := b.Allow()
		if err != nil {
			return v, err
		}
		err = errPanicked // stays so only if next.Call does not return
		defer func() { p.finish(ctx, err, false, 0) }()
		return next.Call(ctx)
	})
}
