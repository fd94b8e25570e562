package resilienceredis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/fleetbudget"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/jsonconf"
	"github.com/f0b5b96b/resilience/telemetry"
	"github.com/redis/go-redis/v9"
)

// retryBudgetScript adds an instance's counts (ARGV[1] executions, ARGV[2]
// retries) to the fleet's window, a hash KEYS[1] of one field per bucket
// and count ("c<bucket>", "r<bucket>"; a bucket is ARGV[3] µs of the
// server's clock, the window ARGV[4] buckets), deletes the fields of
// buckets out of the window (and any field the script cannot have
// written), makes the key expire ARGV[5] ms after the last counts, and
// returns the fleet's totals over the window: {executions, retries}.
var retryBudgetScript = redis.NewScript(`
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local n = tonumber(ARGV[4])
local e = math.floor(now / tonumber(ARGV[3]))
local cur = string.format('%d', e)
local c, r = tonumber(ARGV[1]), tonumber(ARGV[2])
if c > 0 then redis.call('HINCRBY', KEYS[1], 'c' .. cur, c) end
if r > 0 then redis.call('HINCRBY', KEYS[1], 'r' .. cur, r) end
local all = redis.call('HGETALL', KEYS[1])
local C, R, old = 0, 0, {}
for i = 1, #all, 2 do
	local f, v = all[i], tonumber(all[i + 1])
	local kind, fe = string.sub(f, 1, 1), tonumber(string.sub(f, 2))
	if not fe or not v or fe <= e - n or (kind ~= 'c' and kind ~= 'r') then
		old[#old + 1] = f
	elseif kind == 'c' then
		C = C + v
	else
		R = R + v
	end
end
if #old > 0 then redis.call('HDEL', KEYS[1], unpack(old)) end
if c + r > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[5]) end
return {C, R}
`)

// The events a [RetryBudget] gives its [RetryBudgetConfig.Observer]: their
// Kind is "retry", their Name the budget's.
const (
	// RetryBudgetLocal: a retry was decided by the instance's local budget
	// (a retry.Budget of the same Ratio, MinPerSecond and Window), not
	// from the fleet's counts, because Redis did not answer the last
	// flush; one event per such decision. Err is why: the error of the
	// round trip that failed last.
	RetryBudgetLocal telemetry.Type = "retry.budget_local"
)

// RetryBudgetConfig is the whole configuration of a [RetryBudget], for
// configurations read at run time: fill it, check it with
// [RetryBudgetConfig.Validate], and pass it with [WithRetryBudgetConfig].
// A zero field means the default its doc states, so
// NewRetryBudget(rdb, "payments") is Finagle's default budget (Ratio 0.2,
// MinPerSecond 10, Window 10 s) kept by the whole fleet. It reads and
// writes JSON (durations as Go duration strings; Observer is not
// written).
type RetryBudgetConfig struct {
	// Name is the budget's shared identity: every instance that builds a
	// budget of the same Name and Prefix on the same Redis shares its
	// counts. It names the budget in its events and snapshot. It must not
	// be empty, must be valid UTF-8 and must not hold '{' or '}'. The zero
	// value means as given to [NewRetryBudget]; a non-zero Name (through
	// [WithRetryBudgetConfig]) must equal the name given, else
	// NewRetryBudget panics.
	Name string

	// Prefix starts the budget's Redis key, Prefix+"rb:{"+Name+"}". It
	// must not hold '{' or '}'. "" (the default) means "resilience:".
	Prefix string

	// Ratio is how many retries the fleet allows per execution, fleet-wide,
	// over the window: 0.2 allows one retry for every five executions of
	// any instance. It must be finite and > 0; 0 means 0.2.
	// resilience.Off switches the ratio off: only the floor allows
	// retries.
	Ratio float64

	// MinPerSecond is each instance's floor: retries per second that an
	// instance may always make, whatever the fleet's counts (over the
	// window, MinPerSecond × Window in seconds of its own retries). It is
	// a minimum, not an addition: the floor's retries count against the
	// ratio as any other. It must be finite and > 0; 0 means 10.
	// resilience.Off switches the floor off. Ratio and MinPerSecond may
	// not both be Off.
	MinPerSecond float64

	// Window is the length of the sliding window over which executions and
	// retries are counted, in Redis by the server's clock (and, for the
	// floor and each instance's share, by the instance's), in 10 buckets.
	// It must be at least 10ms; 0 means 10 s.
	Window time.Duration

	// FlushInterval is how often an instance sends its counts to Redis and
	// reads back the fleet's totals, in (0, 1s]: between two flushes it
	// decides from the last totals and its own counts since. 0 means
	// 50ms. An instance with nothing to send reads the totals every
	// ProbeInterval only.
	FlushInterval time.Duration

	// Timeout bounds each flush's round trip to Redis: a flush that Redis
	// has not answered within it counts as Redis being away. No retry
	// waits on Redis: flushes run in the budget's own goroutine. 0 means
	// 50ms.
	Timeout time.Duration

	// ProbeInterval is how long the instance decides with its local budget
	// after a flush failed, before it tries Redis again; and how often an
	// idle instance reads the fleet's totals. 0 means 1s.
	ProbeInterval time.Duration

	// Observer, if not nil, receives the budget's events: each retry its
	// local budget decides while Redis is away (RetryBudgetLocal, with
	// why). It is called from the goroutine asking for the retry, so it
	// must be safe for simultaneous use. nil (the default) reports nothing.
	Observer telemetry.Observer
}

const (
	defaultBudgetRatio        = 0.2
	defaultBudgetMinPerSecond = 10
	defaultBudgetWindow       = 10 * time.Second
	minBudgetWindow           = 10 * time.Millisecond // 1ms a bucket
)

// Validate reports the first invalid field of c, with the message
// [NewRetryBudget] would panic with when given c with
// [WithRetryBudgetConfig], or nil if it would accept it. A zero Name
// means NewRetryBudget's argument, which NewRetryBudget checks itself, so
// Validate checks Name only when it is set: RetryBudgetConfig{Ratio: 0.1}
// is valid. NewRetryBudget checks the configuration that all its options
// make together, with the same messages.
func (c RetryBudgetConfig) Validate() error { return c.validate(false) }

// validate is Validate; whole (NewRetryBudget's configuration, its name
// merged in) requires Name too.
func (c RetryBudgetConfig) validate(whole bool) error {
	rate := func(x float64) bool { return x == off || x >= 0 && !math.IsInf(x, 1) }
	switch {
	case (whole || c.Name != "") && nameProblem(c.Name) != "":
		return fmt.Errorf("resilienceredis: RetryBudgetConfig.Name must be non-empty, valid UTF-8 and hold no '{' or '}', got %q", c.Name)
	case strings.ContainsAny(c.Prefix, "{}"):
		return fmt.Errorf("resilienceredis: RetryBudgetConfig.Prefix must hold no '{' or '}', got %q", c.Prefix)
	case !rate(c.Ratio):
		return fmt.Errorf("resilienceredis: RetryBudgetConfig.Ratio must be finite and > 0, 0 (the default, 0.2) or Off (-1, no ratio), got %v", c.Ratio)
	case !rate(c.MinPerSecond):
		return fmt.Errorf("resilienceredis: RetryBudgetConfig.MinPerSecond must be finite and > 0, 0 (the default, 10) or Off (-1, no floor), got %v", c.MinPerSecond)
	case c.Ratio == off && c.MinPerSecond == off:
		return errors.New("resilienceredis: RetryBudgetConfig allows no retry at all: Ratio and MinPerSecond are both Off")
	case c.Window != 0 && c.Window < minBudgetWindow:
		return fmt.Errorf("resilienceredis: RetryBudgetConfig.Window must be at least %v, or 0 (the default, %v), got %v", minBudgetWindow, defaultBudgetWindow, c.Window)
	case c.FlushInterval < 0 || c.FlushInterval > maxFlushInterval:
		return fmt.Errorf("resilienceredis: RetryBudgetConfig.FlushInterval must be in [0, 1s] (0 means %v), got %v", defaultFlushInterval, c.FlushInterval)
	case c.Timeout < 0:
		return fmt.Errorf("resilienceredis: RetryBudgetConfig.Timeout must be >= 0 (0 means %v), got %v", defaultTimeout, c.Timeout)
	case c.ProbeInterval < 0:
		return fmt.Errorf("resilienceredis: RetryBudgetConfig.ProbeInterval must be >= 0 (0 means %v), got %v", defaultProbe, c.ProbeInterval)
	}
	return nil
}

// MarshalJSON writes c as a JSON object: zero fields left out, durations
// as Go duration strings, Off as -1, Observer left out.
func (c RetryBudgetConfig) MarshalJSON() ([]byte, error) { return jsonconf.Marshal(c) }

// UnmarshalJSON reads c from a JSON object as MarshalJSON writes it;
// unknown fields are an error. It does not validate.
func (c *RetryBudgetConfig) UnmarshalJSON(b []byte) error {
	return jsonconf.Unmarshal("resilienceredis", b, c)
}

// resolved returns c with every default filled in (Off stays Off).
func (c RetryBudgetConfig) resolved() RetryBudgetConfig {
	if c.Prefix == "" {
		c.Prefix = defaultPrefix
	}
	if c.Ratio == 0 {
		c.Ratio = defaultBudgetRatio
	}
	if c.MinPerSecond == 0 {
		c.MinPerSecond = defaultBudgetMinPerSecond
	}
	c.Window = cmp0(c.Window, defaultBudgetWindow)
	c.FlushInterval = cmp0(c.FlushInterval, defaultFlushInterval)
	c.Timeout = cmp0(c.Timeout, defaultTimeout)
	c.ProbeInterval = cmp0(c.ProbeInterval, defaultProbe)
	return c
}

// RetryBudget is a retry budget kept by a whole fleet, on Redis: the
// instances' retries together are at most Ratio times the fleet's
// executions over the sliding Window, where a [retry.Budget] per instance
// would allow each instance its Ratio plus its floor. Each instance may
// always make MinPerSecond retries per second (its floor). Give it to
// retry.WithBudget: it is a retry.Budgeter.
//
// Deposit (each execution) costs two atomic adds and a clock reading and
// allocates nothing; Withdraw (each retry) takes a short lock. Neither
// waits on Redis: each instance counts its executions and retries, and its
// goroutine sends them to Redis every FlushInterval (one script, one round
// trip, bounded by Timeout), reading back the fleet's totals over the
// window. Between flushes the instance decides from the last totals and
// its own counts since; it spends only its share of the fleet's headroom
// (its executions over the fleet's, in the window), so that N instances
// do not each spend the whole of it. So the fleet's retries over a window
// are at most Ratio × its executions, or each instance's floor where
// that is more, plus what stale views let through: a flush grants the
// instance its share of the headroom left as Redis sees it, without the
// retries that other instances have made and not yet flushed. With
// flushes on time that is a share of one FlushInterval's retries; a
// flusher held up (a loaded machine) lets more through (with two
// instances, up to half as much again as the headroom).
//
// When a flush fails or takes longer than Timeout, the instance decides
// with a local retry.Budget of the same Ratio, MinPerSecond and Window
// (which counted the instance's executions and retries all along), emits
// RetryBudgetLocal for each retry it decides so, and tries Redis again
// after ProbeInterval. Those counts are not sent to Redis.
//
// A RetryBudget is a telemetry.Guard (Name, Snapshot). It is safe for
// simultaneous use by multiple goroutines. Create one with
// [NewRetryBudget] (the zero RetryBudget is not usable: its methods panic
// naming NewRetryBudget; its Close does nothing); [RetryBudget.Close]
// stops its goroutine.
type RetryBudget struct {
	cfg   RetryBudgetConfig
	fleet *fleetbudget.Budget
	local *retry.Budget
	rem   remote
	keys  []string
	base  []any // the script's ARGV after the counts

	reason atomic.Pointer[reason] // why decisions are local: the last failed flush's error

	mu      sync.Mutex
	contact time.Time // the last flush Redis answered, or tried

	execs, granted, denied, localN, flushes, failed atomic.Uint64

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed atomic.Bool
}

var _ retry.Budgeter = (*RetryBudget)(nil)

// NewRetryBudget returns the fleet-wide retry budget named name on rdb,
// configured by opts, and starts its flusher; with no options, the budget
// of [RetryBudgetConfig]{}: Ratio 0.2, MinPerSecond 10, Window 10 s, kept
// by the whole fleet. Every instance that builds a budget of the same name
// and prefix on the same Redis shares its counts, in one hash,
// Prefix+"rb:{name}" (a hash tag: one slot of a Redis Cluster), whose
// fields expire with the window and whose key expires 2 × Window after the
// last counts. NewRetryBudget does not wait for Redis: until its first
// flush is answered the instance allows its floor and Ratio times its own
// executions.
//
// NewRetryBudget panics if rdb is nil (or a nil pointer), if name is
// empty, not valid UTF-8 or holds '{' or '}', if an option is nil, or if
// the configuration is invalid, with the message of
// [RetryBudgetConfig.Validate] naming the field and the value.
//
// The name is positional, and there is no WithName: it is required, the
// identity of the counts the fleet shares (the rule of every constructor
// here: a required value is positional, an optional one is an option).
func NewRetryBudget(rdb redis.UniversalClient, name string, opts ...RetryBudgetOption) *RetryBudget {
	b := newRetryBudget(rdb, name, opts)
	b.wg.Add(1)
	go b.flushLoop()
	return b
}

// newRetryBudget returns the budget without its flusher (tests drive it).
func newRetryBudget(rdb redis.UniversalClient, name string, opts []RetryBudgetOption) *RetryBudget {
	checkClient("NewRetryBudget", rdb)
	checkName("NewRetryBudget", name)
	c := RetryBudgetConfig{Name: name}
	for i, o := range opts {
		checkOption("NewRetryBudget", i, o == nil)
		o.applyRetryBudget(&c)
	}
	checkPositional("NewRetryBudget", fmt.Sprintf("rdb, %q, ...", name), "WithRetryBudgetConfig", "Name", c.Name, name)
	if err := c.validate(true); err != nil {
		panic(err.Error())
	}
	c = c.resolved()
	ratio, floor := max(c.Ratio, 0), max(c.MinPerSecond, 0) // Off is -1: none
	width := max(c.Window.Microseconds()/fleetbudget.Buckets, 1)
	b := &RetryBudget{
		cfg:   c,
		fleet: fleetbudget.New(fleetbudget.Config{Ratio: ratio, Reserve: floor * c.Window.Seconds(), Window: c.Window}),
		local: retry.NewBudget(retry.BudgetConfig{Ratio: c.Ratio, MinPerSecond: c.MinPerSecond, Window: c.Window}),
		rem:   newRemote(rdb, c.Timeout, c.ProbeInterval),
		keys:  []string{c.Prefix + "rb:{" + c.Name + "}"},
		base:  []any{width, fleetbudget.Buckets, (2 * c.Window).Milliseconds()},
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	return b
}

// Name returns the budget's name.
func (b *RetryBudget) Name() string {
	if b.local == nil {
		zeroValue("RetryBudget", "Name", "NewRetryBudget")
	}
	return b.cfg.Name
}

// Deposit counts one execution, in the fleet's counts (unless Redis is
// away) and in the local budget. It allocates nothing and never waits.
func (b *RetryBudget) Deposit() {
	if b.local == nil {
		zeroValue("RetryBudget", "Deposit", "NewRetryBudget")
	}
	b.execs.Add(1)
	b.local.Deposit()
	if b.rem.downUntil.Load() == 0 {
		b.fleet.Deposit()
	}
}

// Withdraw reports whether one more retry is allowed now, and counts it if
// so: from the fleet's counts while Redis answers the flushes, from the
// local budget (and with a RetryBudgetLocal event) while it does not. It
// never waits on Redis.
func (b *RetryBudget) Withdraw() bool {
	if b.local == nil {
		zeroValue("RetryBudget", "Withdraw", "NewRetryBudget")
	}
	var ok bool
	if b.rem.downUntil.Load() != 0 {
		b.localN.Add(1)
		if o := b.cfg.Observer; o != nil {
			o.Observe(telemetry.Event{Type: RetryBudgetLocal, Name: b.cfg.Name, Err: b.why()})
		}
		ok = b.local.Withdraw()
	} else if ok = b.fleet.Withdraw(); ok {
		// The local budget counts the retry too, for a fallback; its
		// answer does not matter here.
		b.local.Withdraw()
	}
	if ok {
		b.granted.Add(1)
	} else {
		b.denied.Add(1)
	}
	return ok
}

// why returns the reason decisions are local.
func (b *RetryBudget) why() error {
	if b.rem.closed.Load() {
		return ErrClosed
	}
	if r := b.reason.Load(); r != nil {
		return r.err
	}
	return errLocal
}

// Close makes the budget decide locally for good, as while Redis is away:
// it stops the flusher, waits for a round trip in flight to end (one that
// outlived Timeout ends when the client gives it up), and drops the counts
// not yet sent. Deposit and Withdraw still work after Close, with the
// local budget (which counted the instance's executions and retries all
// along): each Withdraw emits a RetryBudgetLocal event whose Err is
// [ErrClosed], and the snapshot's State is [StateLocal] with Reason
// ErrClosed's message. It does not close rdb. Close returns nil; calling
// it again does nothing.
func (b *RetryBudget) Close() error {
	if b.local == nil || b.closed.Swap(true) {
		return nil
	}
	b.rem.closed.Store(true)
	b.cancel()
	b.wg.Wait()
	b.rem.wg.Wait()
	b.rem.downUntil.Store(math.MaxInt64) // no flush will ever clear it
	return nil
}

func (b *RetryBudget) flushLoop() {
	defer b.wg.Done()
	t := time.NewTicker(b.cfg.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-t.C:
		}
		b.flush(false)
	}
}

// flush sends the counts not yet sent and takes the fleet's totals; with
// nothing to send, only if ProbeInterval has passed since the last contact
// or force is set. While Redis is away it tries only once ProbeInterval
// has passed since the failure. It reports whether Redis answered.
func (b *RetryBudget) flush(force bool) bool {
	now := time.Now()
	if !b.rem.usable(now.UnixNano(), noSlot) {
		return false
	}
	calls, retries := b.fleet.Take()
	b.mu.Lock()
	idle := calls == 0 && retries == 0 && now.Sub(b.contact) < b.cfg.ProbeInterval && b.rem.downUntil.Load() == 0
	if !idle {
		b.contact = now
	}
	b.mu.Unlock()
	if idle && !force {
		b.fleet.Drop()
		return true
	}
	b.flushes.Add(1)
	v, err := b.rem.run(b.ctx, retryBudgetScript, b.keys, append([]any{calls, retries}, b.base...))
	var fc, fr int64
	if err == nil {
		reply, _ := v.([]any)
		if len(reply) != 2 {
			err = fmt.Errorf("%w: the script's reply %v is not {executions, retries}", ErrUnusable, v)
		} else {
			fc, _ = reply[0].(int64)
			fr, _ = reply[1].(int64)
		}
	}
	if err != nil {
		b.fleet.Drop()
		if b.ctx.Err() != nil {
			return false // closing
		}
		b.failed.Add(1)
		b.reason.Store(&reason{classify(err)})
		b.rem.failed(now.UnixNano(), noSlot)
		b.rem.reload(now.UnixNano())
		return false
	}
	b.fleet.Settle(fc, fr)
	b.rem.answered(noSlot)
	return true
}

// Snapshot returns the budget's state as this instance knows it, in the
// shape all guards share: Kind "retry", the budget's Name, State
// [StateShared] or [StateLocal] (with Reason, while local, the error of the
// flush that failed last), Refused (the retries this instance was denied),
// and these values:
//
//	local             gauge    "1"            1 while the local budget decides (Redis did not answer the last flush), else 0
//	headroom          gauge    "{retry}"      this instance's share of the fleet's headroom at the last flush (negative: over the ratio)
//	executions        counter  "{execution}"  executions deposited
//	retries_granted   counter  "{retry}"      retries granted
//	decisions_local   counter  "{decision}"   retries decided by the local budget (each also a RetryBudgetLocal event)
//	flushes           counter  "{flush}"      flushes sent to Redis
//	flushes_failed    counter  "{flush}"      flushes Redis did not answer, or not within Timeout
//
// The counts are of this instance, since the budget was made; the fleet's
// are in Redis, which a snapshot does not ask. Snapshot is safe for
// simultaneous use and allocates the Values slice.
func (b *RetryBudget) Snapshot() telemetry.Snapshot {
	if b.local == nil {
		zeroValue("RetryBudget", "Snapshot", "NewRetryBudget")
	}
	s := telemetry.Snapshot{Kind: retry.Kind, Name: b.cfg.Name, State: StateShared, Refused: b.denied.Load()}
	local := 0.0
	if b.rem.downUntil.Load() != 0 {
		s.State, s.Reason, local = StateLocal, b.why().Error(), 1
	}
	s.Values = []telemetry.Value{
		{Name: "local", Unit: "1", Help: "1 while the instance's local budget decides because Redis did not answer the last flush, else 0.", Value: local},
		{Name: "headroom", Unit: "{retry}", Help: "The instance's share of the fleet's headroom (Ratio × executions - retries) at the last flush.", Value: b.fleet.Headroom()},
		{Name: "executions", Unit: "{execution}", Type: telemetry.CounterValue, Help: "Executions deposited in the budget.", Value: float64(b.execs.Load())},
		{Name: "retries_granted", Unit: "{retry}", Type: telemetry.CounterValue, Help: "Retries the budget granted.", Value: float64(b.granted.Load())},
		{Name: "decisions_local", Unit: "{decision}", Type: telemetry.CounterValue, Help: "Retries decided by the local budget because Redis did not answer.", Value: float64(b.localN.Load())},
		{Name: "flushes", Unit: "{flush}", Type: telemetry.CounterValue, Help: "Flushes of the instance's counts sent to Redis.", Value: float64(b.flushes.Load())},
		{Name: "flushes_failed", Unit: "{flush}", Type: telemetry.CounterValue, Help: "Flushes Redis did not answer, or not within Timeout.", Value: float64(b.failed.Load())},
	}
	return s
}
