package resilienceredis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/telemetry"
	"github.com/redis/go-redis/v9"
)

// The bucket is GCRA (the Generic Cell Rate Algorithm, virtual scheduling,
// as in policy/ratelimit), kept in Redis as one string key: the
// theoretical arrival time (TAT), the time at which the bucket will be full
// again, in microseconds of the server's clock since 2024-01-01 (a double:
// exact to well under a microsecond for centuries). One script makes a
// decision in one round trip: it reads the server's TIME (so the clients'
// clocks play no part), admits n events if
//
//	max(TAT, now) + n·T - now - wait <= Burst·T   (T = 1e6/Rate µs)
//
// for the wait the caller accepts (ARGV[4]; 0 for Allow), sets TAT to
// max(TAT, now) + n·T, and makes the key expire when the bucket is full
// again (PX: TAT - now), so an idle tenant costs Redis nothing. n = 0 (a
// Check) reads the bucket and writes nothing.
//
// A stored value the scripts could not have written — not a number, NaN,
// infinite, in the past beyond the key's own expiry, without a TTL, with
// a TTL that does not match it (every write sets PX to TAT - now), or more
// than 2^52 µs (142 years) ahead — is repaired first: the bucket is set
// empty (TAT = now + Burst·T, which refuses for at most Burst·T) and the
// reply says so. The 10ms slack covers the rounding of PX to milliseconds.
//
// It returns {1, wait µs, repaired, TAT} or, refused, {0, the wait µs until
// the events would pass, repaired}; the TAT only when ARGV[5] asks for it
// (a Wait, which may give its tokens back). redis.Script runs it with
// EVALSHA and falls back to EVAL when the server does not have it
// (NOSCRIPT).
var gcraScript = redis.NewScript(`
local t = redis.call('TIME')
local now = (t[1] - 1704067200) * 1000000 + t[2]
local T, tau, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local tat, bad = now, 0
local v = redis.call('GET', KEYS[1])
if v then
	local x = tonumber(v)
	local ttl = redis.call('PTTL', KEYS[1])
	if x and x >= now - 10000 and x - now <= 4503599627370496 and ttl >= 0 and x - now <= ttl * 1000 + 10000 then
		if x > now then tat = x end
	else
		tat, bad = now + tau, 1
		redis.call('SET', KEYS[1], string.format('%.17g', tat), 'PX', math.ceil(tau / 1000))
	end
end
local new = tat + n * T
local wait = new - now - tau
if wait > tonumber(ARGV[4]) then
	return {0, math.ceil(wait), bad}
end
if n == 0 then
	return {1, 0, bad}
end
if ARGV[5] then
	local s = string.format('%.17g', new)
	redis.call('SET', KEYS[1], s, 'PX', math.ceil((new - now) / 1000))
	return {1, math.ceil(wait), bad, s}
end
redis.call('SET', KEYS[1], new, 'PX', math.ceil((new - now) / 1000))
return {1, math.ceil(wait), bad}
`)

// refundScript gives back the n·T (ARGV[2]) µs of tokens that a Wait took
// and did not use, if the TAT is still the one that Wait set (ARGV[1]):
// nobody has reserved tokens behind them.
var refundScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local t = redis.call('TIME')
local now = (t[1] - 1704067200) * 1000000 + t[2]
local back = tonumber(ARGV[1]) - tonumber(ARGV[2])
if back <= now then
	redis.call('DEL', KEYS[1])
else
	redis.call('SET', KEYS[1], string.format('%.17g', back), 'PX', math.ceil((back - now) / 1000))
end
return 1
`)

// checkWriteScript is the write of a Check: it sets the bucket KEYS[1]
// as a decision does, with the longest expiry one sets (Burst·T, ARGV[1]
// µs), then puts it back as it was (its value, and its expiry to the
// millisecond; no key if there was none), in one script: a server that
// refuses the decisions' writes (an ACL that denies SET) refuses the
// Check, and the bucket is unchanged.
var checkWriteScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
local t = redis.call('TIME')
local now = (t[1] - 1704067200) * 1000000 + t[2]
local tau = tonumber(ARGV[1])
redis.call('SET', KEYS[1], string.format('%.17g', now + tau), 'PX', math.ceil(tau / 1000))
if v and ttl > 0 then
	redis.call('SET', KEYS[1], v, 'PX', ttl)
elseif v and ttl == -1 then
	redis.call('SET', KEYS[1], v)
else
	redis.call('DEL', KEYS[1])
end
return 1
`)

// settingsScript records the settings of a limiter (ARGV[1], "rate/burst")
// in the sorted set KEYS[1], scored by the server's time (µs), forgets
// the settings not recorded within ARGV[2] µs, and returns the settings
// left: those in use in the fleet.
var settingsScript = redis.NewScript(`
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local horizon = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - horizon)
redis.call('PEXPIRE', KEYS[1], math.ceil(horizon / 1000))
return redis.call('ZRANGE', KEYS[1], 0, -1)
`)

// How often a limiter checks the server (its eviction policy, the
// settings in use under its name), and for how long a recorded setting
// counts as in use.
const (
	checkEvery      = time.Minute
	settingsHorizon = 3 * checkEvery
	checkTimeout    = time.Second // of a check in the background
)

// The events a [Limiter] or a [KeyedLimiter] gives its
// [LimiterConfig.Observer], beside none for the decisions Redis makes:
// their Kind is "ratelimit", their Name the limiter's, their Key the
// tenant's for a KeyedLimiter's buckets ("" for the checks, which are of
// the whole limiter).
const (
	// LimiterLocal: a decision was made by the instance's fallback, not
	// by the fleet's bucket; one event per such decision. Err is why: the
	// error of the round trip that failed last (one matching ErrUnusable
	// when Redis refuses the limiter's commands, a network error, or, for
	// a round trip that Timeout ended, "resilienceredis: Redis did not
	// answer within the timeout", wrapping the client's error, whatever
	// the client's ContextTimeoutEnabled; the caller's context's error
	// only when the caller's context ended).
	LimiterLocal telemetry.Type = "ratelimit.local"
	// LimiterEvictionUnsafe: the server may evict the limiter's keys (Err
	// matches ErrEvictionPolicy and names the policy). Reported by Check
	// and by each check of the server (at the first decision Redis answers,
	// then every minute).
	LimiterEvictionUnsafe telemetry.Type = "ratelimit.eviction_unsafe"
	// LimiterSettingsConflict: limiters of this name (and Prefix) with
	// other Rate or Burst are in use in the fleet (Err matches
	// ErrSettingsConflict and lists them). Reported as
	// LimiterEvictionUnsafe is.
	LimiterSettingsConflict telemetry.Type = "ratelimit.settings_conflict"
	// LimiterBucketRepaired: a bucket held a value the limiter cannot have
	// written, and was set empty (Err is ErrBadBucket).
	LimiterBucketRepaired telemetry.Type = "ratelimit.bucket_repaired"
)

var (
	// ErrUnusable matches the errors of Redis that asking again will not
	// mend, for a limiter, a breaker and a retry budget alike: the user may
	// not run EVALSHA, EVAL or the scripts' commands on the keys (NOPERM,
	// an ACL that denies them), a key of the guard holds another type
	// (WRONGTYPE), the server has no scripting (an unknown command), the
	// client is not authenticated. The instance then decides alone — the
	// limiter's fallback, the breaker's local breaker, the retry budget's
	// local budget — and tries Redis again every ProbeInterval.
	ErrUnusable = errors.New("resilienceredis: Redis refuses the commands")
	// ErrEvictionPolicy matches the warning that the server may evict the
	// limiter's keys: its maxmemory is set and its maxmemory-policy is not
	// noeviction. Each key evicted refills a bucket.
	ErrEvictionPolicy = errors.New("resilienceredis: Redis may evict the limiter's keys")
	// ErrSettingsConflict matches the warning that limiters of one name
	// and Prefix with different Rate or Burst are in use in the fleet.
	ErrSettingsConflict = errors.New("resilienceredis: limiters of one name have different settings")
	// ErrBadBucket is the error of a LimiterBucketRepaired event.
	ErrBadBucket = errors.New("resilienceredis: a bucket held a value the limiter cannot have written; set empty")
)

// limiterParams is what every bucket of one limiter shares; immutable but
// for the remote's health.
type limiterParams struct {
	cfg        LimiterConfig
	inf        bool
	layer      string
	remote     remote
	incUs      float64  // T, µs per event
	argT       string   // T, as the script reads it
	argTau     string   // Burst·T µs
	horizon    int64    // the longest wait a WaitN may reserve, µs: 2^52 - Burst·T (see WaitN)
	argHorizon string   // horizon, as the script reads it
	prefix     string   // of the keys
	fp         string   // the settings, "rate/burst", in every bucket's key
	setKey     []string // the sorted set of the settings in use under the name
	oneArgs    []any    // the arguments of Allow: one event, no wait

	// reason is why decisions are local: the error of the last round
	// trip that failed.
	reason atomic.Pointer[reason]
	// nextCheck is when (UnixNano) a decision that Redis answered starts
	// the next check of the server in the background; 0 before the first.
	nextCheck atomic.Int64

	// The fallback while Redis is unreachable: one bucket, or one per key;
	// neither when it fails open or closed.
	fbOne                *ratelimit.Limiter
	fbKeyed              *ratelimit.Keyed[string]
	failOpen, failClosed bool

	// The counts of Snapshot, since the limiter was made.
	refused, sharedN, localN atomic.Uint64

	// stopCtx ends with Close (stop); checks are the checks of the server
	// running in the background.
	stopCtx context.Context
	stop    context.CancelFunc
	checks  sync.WaitGroup
}

// Limiter is a token bucket shared by every instance of a fleet: each
// decision is one round trip to Redis (one script, by the server's clock),
// so the fleet as a whole admits at most Burst + Rate·w events in any
// interval of length w, as one [ratelimit.Limiter] would in one process.
// [Limiter.Allow] and [Limiter.AllowN] decide at once; [Limiter.Wait] and
// [Limiter.WaitN] wait for the tokens when the wait fits the caller's
// deadline and MaxWait.
//
// No decision waits on Redis longer than [LimiterConfig.Timeout]: when
// Redis fails or is slow, the decision is made by the instance's fallback
// ([LimiterConfig.FallbackRate]) and, for ProbeInterval, so are the
// following ones without asking Redis; then one decision tries Redis again.
//
// A Limiter is safe for simultaneous use by multiple goroutines. Create one
// with [NewLimiter], or get one per key from a [KeyedLimiter] (the zero
// Limiter is not usable: its methods panic naming NewLimiter; its Close
// does nothing); [Limiter.Close] makes it
// decide locally for good.
type Limiter struct {
	p *limiterParams

	keys []string // the bucket's Redis key
	key  string   // the tenant, for a KeyedLimiter's fallback
	slot int      // the key's slot, for a KeyedLimiter on a Redis Cluster; else noSlot
	view bool     // a KeyedLimiter's tenant: Close does nothing
}

// NewLimiter returns the fleet-wide token bucket named name on rdb, which
// refills at rate events per second up to burst. Every instance that
// builds a limiter of the same name, prefix, rate and burst on the same
// Redis shares its bucket. Its key is Prefix+"rl:{name}:rate/burst"
// (e.g. "resilience:rl:{api}:100/20"): a hash tag, so a Redis Cluster
// keeps it on one node like any single key; the settings in the key keep
// instances of the same name with other settings (a rolling change of the
// limit) in a bucket of their own, and [Limiter.Check] and the Observer
// say so. NewLimiter asks Redis nothing: [Limiter.Check] does.
//
// NewLimiter panics if rdb is nil (or a nil pointer, such as a nil
// *redis.Client), if name is empty, not valid UTF-8 or holds '{' or '}',
// if an option is nil, or if the configuration is invalid (see
// [LimiterConfig.Validate]), with a message naming the constructor or the
// field and the value, e.g. `resilienceredis: NewLimiter(rdb, "a\xff",
// ...): name must be valid UTF-8` or "resilienceredis: Burst must be in
// [1, 1<<40], got 0".
//
// The name, rate and burst are positional, and there is no WithName: they
// are required, and the name is the identity of the state the fleet
// shares (the rule of every constructor here: a required value is
// positional, an optional one is an option).
func NewLimiter(rdb redis.UniversalClient, name string, rate float64, burst int, opts ...LimiterOption) *Limiter {
	p := newLimiterParams("NewLimiter", rdb, name, rate, burst, opts, false)
	p.setKey = []string{p.prefix + "{" + p.cfg.Name + "}:settings"}
	return &Limiter{p: p, keys: []string{p.prefix + "{" + p.cfg.Name + "}:" + p.fp}, slot: noSlot}
}

// KeyedLimiter is a fleet-wide token bucket per key (a tenant, a client),
// all with the same configuration: [KeyedLimiter.Limiter] returns one
// key's bucket. Each key is one Redis key,
// Prefix+"rl:"+Name+":rate/burst:{"+key+"}", that expires when its
// bucket is full again, so idle keys cost Redis nothing and the number of
// keys is not bounded by the limiter. The key is the whole hash tag, so a
// Redis Cluster spreads tenants over its primaries by their keys' slots; a
// key's "{", "}" and "\" are escaped in it (as \[, \] and \\), so
// that no key, however named, chooses the slot of others (keys "a}1",
// "a}2", ... do not all land in the slot of "a").
//
// A KeyedLimiter is safe for simultaneous use by multiple goroutines.
// Create one with [NewKeyedLimiter].
type KeyedLimiter struct {
	p *limiterParams
}

// NewKeyedLimiter returns a KeyedLimiter named name on rdb whose buckets
// each refill at rate events per second up to burst, as [NewLimiter]
// describes. While Redis is unreachable each key has a bucket of its own
// in the instance (a ratelimit.Keyed, at most 8192 keys). On a
// *redis.ClusterClient, whether Redis is unreachable is known per slot (a
// table of 16384 words, 128 KiB): the tenants of a primary that fails go
// to the fallback, the others stay on their shared buckets. It panics on
// an invalid configuration, as NewLimiter does. Its name, rate and burst
// are positional as NewLimiter's are: required values.
func NewKeyedLimiter(rdb redis.UniversalClient, name string, rate float64, burst int, opts ...LimiterOption) *KeyedLimiter {
	p := newLimiterParams("NewKeyedLimiter", rdb, name, rate, burst, opts, true)
	p.setKey = []string{p.prefix + p.cfg.Name + ":settings"}
	return &KeyedLimiter{p: p}
}

// Limiter returns key's bucket. It costs one small allocation; the
// Limiter may be kept and used for as long as needed. It shares k's
// state: its Close does nothing (a tenant cannot close the limiter of
// the others); close k with [KeyedLimiter.Close].
func (k *KeyedLimiter) Limiter(key string) *Limiter {
	if k.p == nil {
		zeroValue("KeyedLimiter", "Limiter", "NewKeyedLimiter")
	}
	l := &Limiter{p: k.p, keys: []string{k.p.prefix + k.p.cfg.Name + ":" + k.p.fp + ":{" + hashTag(key) + "}"}, key: key, slot: noSlot, view: true}
	if k.p.remote.slots != nil {
		l.slot = keySlot(l.keys[0])
	}
	return l
}

// tagEscaper escapes the characters of a key that would end or move its
// hash tag: "{" as \[, "}" as \], and the escape itself as \\, so that
// distinct keys stay distinct.
var tagEscaper = strings.NewReplacer(`\`, `\\`, "{", `\[`, "}", `\]`)

// hashTag returns key as the whole of a hash tag: escaped if it holds a
// brace or a backslash, so that every byte of the key, and nothing but
// the key, chooses its slot of a Redis Cluster.
func hashTag(key string) string {
	if !strings.ContainsAny(key, `{}\`) {
		return key
	}
	return tagEscaper.Replace(key)
}

// Allow reports whether one event for key may happen now, fleet-wide, and
// takes its token if so: Limiter(key).Allow(ctx).
func (k *KeyedLimiter) Allow(ctx context.Context, key string) bool {
	if k.p == nil {
		zeroValue("KeyedLimiter", "Allow", "NewKeyedLimiter")
	}
	return k.Limiter(key).Allow(ctx)
}

func newLimiterParams(ctor string, rdb redis.UniversalClient, name string, rate float64, burst int, opts []LimiterOption, keyed bool) *limiterParams {
	checkClient(ctor, rdb)
	checkName(ctor, name)
	cfg := LimiterConfig{Name: name, Rate: rate, Burst: burst}
	for i, o := range opts {
		checkOption(ctor, i, o == nil)
		o.applyLimiter(&cfg)
	}
	args := fmt.Sprintf("rdb, %q, %v, %d, ...", name, rate, burst)
	checkPositional(ctor, args, "WithLimiterConfig", "Name", cfg.Name, name)
	checkPositional(ctor, args, "WithLimiterConfig", "Rate", cfg.Rate, rate)
	checkPositional(ctor, args, "WithLimiterConfig", "Burst", cfg.Burst, burst)
	if err := cfg.validate(true); err != nil {
		panic(err.Error())
	}
	p := &limiterParams{cfg: cfg, inf: math.IsInf(cfg.Rate, 1), layer: "ratelimit(" + cfg.Name + ")"}
	p.remote = newRemote(rdb, cmp0(cfg.Timeout, defaultTimeout), cmp0(cfg.ProbeInterval, defaultProbe))
	p.stopCtx, p.stop = context.WithCancel(context.Background())
	p.remote.stop = p.stopCtx.Done()
	if keyed {
		p.remote.perSlot()
	}
	prefix := cfg.Prefix
	if prefix == "" {
		prefix = defaultPrefix
	}
	p.prefix = prefix + "rl:"
	if !p.inf {
		p.incUs = 1e6 / cfg.Rate
		p.argT = strconv.FormatFloat(p.incUs, 'g', 17, 64)
		p.argTau = strconv.FormatFloat(p.incUs*float64(cfg.Burst), 'g', 17, 64)
		p.horizon = int64(maxFillUs - p.incUs*float64(cfg.Burst)) // >= 0: Validate bounds the fill time
		p.argHorizon = strconv.FormatInt(p.horizon, 10)
		p.oneArgs = []any{p.argT, p.argTau, "1", "0"}
		p.fp = strconv.FormatFloat(cfg.Rate, 'g', -1, 64) + "/" + strconv.Itoa(cfg.Burst)
	}
	fr, fb := cfg.FallbackRate, cfg.FallbackBurst
	if fr == 0 {
		fr = cfg.Rate
	}
	if fb == 0 {
		fb = cfg.Burst
	}
	switch {
	case fr == off:
		p.failClosed = true
	case math.IsInf(fr, 1):
		p.failOpen = true
	case keyed:
		p.fbKeyed = ratelimit.NewKeyed[string](fr, fb, ratelimit.WithName(cfg.Name))
	default:
		p.fbOne = ratelimit.New(fr, fb, ratelimit.WithName(cfg.Name))
	}
	return p
}

// cmp0 returns d, or def if d is 0.
func cmp0(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Name returns the limiter's name.
func (l *Limiter) Name() string {
	if l.p == nil {
		zeroValue("Limiter", "Name", "NewLimiter")
	}
	return l.p.cfg.Name
}

// Allow reports whether one event may happen now, fleet-wide, and takes
// its token if so. It never waits for a token; it waits on Redis at most
// Timeout. A ctx that is done (or ends during the round trip) makes it
// return false without a token taken.
func (l *Limiter) Allow(ctx context.Context) bool {
	if l.p == nil {
		zeroValue("Limiter", "Allow", "NewLimiter")
	}
	return l.AllowN(ctx, 1)
}

// AllowN reports whether n events may happen now, fleet-wide, and takes
// their n tokens if so (all or none), as Allow does. AllowN(ctx, 0) is
// true; an n above the burst is never allowed unless the rate is +Inf.
// AllowN panics if n < 0.
func (l *Limiter) AllowN(ctx context.Context, n int) bool {
	return l.take(ctx, n) == nil
}

// take takes n tokens now, or returns why not: a refusal
// (*resilience.RefusedError matching ratelimit.ErrLimited) or ctx.Err().
func (l *Limiter) take(ctx context.Context, n int) error {
	p := l.p
	if p == nil {
		zeroValue("Limiter", "AllowN", "NewLimiter")
	}
	switch {
	case n < 0:
		panic(fmt.Sprintf("resilienceredis: n must be >= 0, got %d", n))
	case n == 0 || p.inf:
		return nil
	case int64(n) > int64(p.cfg.Burst):
		p.refused.Add(1)
		return resilience.Refuse(ratelimit.ErrLimited, p.cfg.Name, resilience.Never)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	args := p.oneArgs
	if n != 1 {
		args = []any{p.argT, p.argTau, strconv.Itoa(n), "0"}
	}
	ok, wait, _, err := l.eval(ctx, args)
	switch {
	case err == errLocal:
		p.localN.Add(1)
		p.observe(LimiterLocal, l.key, p.why())
		if l.localAllow(n) {
			return nil
		}
		p.refused.Add(1)
		return resilience.Refuse(ratelimit.ErrLimited, p.cfg.Name, -1)
	case err != nil:
		return err
	case !ok:
		p.sharedN.Add(1)
		p.refused.Add(1)
		return resilience.Refuse(ratelimit.ErrLimited, p.cfg.Name, wait)
	}
	p.sharedN.Add(1)
	return nil
}

// errLocal says that Redis was not asked, or did not answer in time: the
// fallback decides.
var errLocal = fmt.Errorf("resilienceredis: deciding locally")

// reason is why a limiter's decisions are local: see limiterParams.reason.
type reason struct{ err error }

// why returns the reason decisions are local.
func (p *limiterParams) why() error {
	if p.remote.closed.Load() {
		return ErrClosed
	}
	if r := p.reason.Load(); r != nil {
		return r.err
	}
	return errLocal
}

// eval runs the GCRA script with args. It returns whether the events were
// admitted, the wait (until they were or would be there; at least 1µs when
// refused), the TAT set, or errLocal when Redis was not asked or failed
// (p.why() then says why), or ctx.Err().
func (l *Limiter) eval(ctx context.Context, args []any) (ok bool, wait time.Duration, tat string, err error) {
	var repaired bool
	err = l.ask(ctx, func() (err error) {
		ok, wait, tat, repaired, err = l.script(ctx, args)
		return err
	})
	if err != nil {
		return false, 0, "", err
	}
	if repaired {
		l.p.observe(LimiterBucketRepaired, l.key, ErrBadBucket)
	}
	return ok, wait, tat, nil
}

// ask runs one of the limiter's scripts, call, as every decision asks
// Redis: not at all while Redis is held away for the bucket's slot
// (errLocal); on call's error, ctx.Err() if ctx is done, or else errLocal
// with the error kept as the reason, the slot held away for ProbeInterval
// and the client asked to reload its view of the cluster; on an answer,
// the slot marked healthy and the server's settings checked again when
// due, in the background.
func (l *Limiter) ask(ctx context.Context, call func() error) error {
	p := l.p
	r := &p.remote
	now := time.Now().UnixNano()
	if !r.usable(now, l.slot) {
		return errLocal
	}
	if err := call(); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		p.reason.Store(&reason{err})
		r.failed(now, l.slot)
		r.reload(now)
		return errLocal
	}
	r.answered(l.slot)
	if next := p.nextCheck.Load(); now >= next && !p.remote.closed.Load() && p.nextCheck.CompareAndSwap(next, now+int64(checkEvery)) {
		p.checks.Add(1)
		go func() {
			defer p.checks.Done()
			cctx, cancel := context.WithTimeout(p.stopCtx, checkTimeout)
			defer cancel()
			if done, _ := p.checkServer(cctx); !done {
				// Not answered: the next decision that Redis answers
				// after ProbeInterval tries again.
				p.nextCheck.Store(time.Now().UnixNano() + int64(p.remote.probe))
			}
		}()
	}
	return nil
}

// script runs the GCRA script with args and reads its reply; an error is
// the round trip's (errSlow, the client's) or, for an error that asking
// again will not mend, one matching ErrUnusable.
func (l *Limiter) script(ctx context.Context, args []any) (ok bool, wait time.Duration, tat string, repaired bool, err error) {
	v, err := l.p.remote.run(ctx, gcraScript, l.keys, args)
	if err != nil {
		return false, 0, "", false, classify(err)
	}
	reply, _ := v.([]any)
	if len(reply) < 3 {
		return false, 0, "", false, fmt.Errorf("%w: the script's reply %v is not {admitted, wait, repaired}", ErrUnusable, v)
	}
	admitted, _ := reply[0].(int64)
	us, _ := reply[1].(int64)
	fixed, _ := reply[2].(int64)
	wait = time.Duration(max(us, 0)) * time.Microsecond
	if us > math.MaxInt64/int64(time.Microsecond) {
		wait = math.MaxInt64
	}
	if admitted == 1 {
		if len(reply) == 4 {
			tat, _ = reply[3].(string)
		}
		return true, wait, tat, fixed == 1, nil
	}
	return false, max(wait, time.Microsecond), "", fixed == 1, nil
}

// transient are the prefixes of the server's errors that say "not now":
// out of memory under noeviction, loading, busy with a script, a replica
// that lost its primary or is read-only (a failover), a cluster resharding
// or down. Any other error reply (NOPERM, WRONGTYPE, an unknown command,
// NOAUTH, a script error) says that asking again will not help.
var transient = []string{"OOM", "LOADING", "BUSY", "MASTERDOWN", "READONLY", "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS", "MOVED", "ASK"}

// classify returns err, wrapped so that it matches ErrUnusable if it is an
// error reply of the server that is not transient.
func classify(err error) error {
	var re redis.Error
	if !errors.As(err, &re) || err == redis.Nil {
		return err
	}
	code, _, _ := strings.Cut(re.Error(), " ")
	for _, t := range transient {
		if code == t {
			return err
		}
	}
	return fmt.Errorf("%w: %w", ErrUnusable, err)
}

// localAllow is the fallback's decision on n events.
func (l *Limiter) localAllow(n int) bool {
	p := l.p
	switch {
	case p.failOpen:
		return true
	case p.failClosed:
		return false
	case p.fbKeyed != nil:
		return p.fbKeyed.Limiter(l.key).AllowN(n)
	}
	return p.fbOne.AllowN(n)
}

// Wait waits for one event's token and takes it; see [Limiter.WaitN].
func (l *Limiter) Wait(ctx context.Context) error {
	if l.p == nil {
		zeroValue("Limiter", "Wait", "NewLimiter")
	}
	return l.WaitN(ctx, 1)
}

// WaitN takes n tokens, fleet-wide, waiting until they are there. The
// tokens are reserved in Redis at once (other instances' calls queue
// behind them), and WaitN sleeps until they are due. It returns nil once
// they are taken (a ctx that ends once they are due, as the sleep ends,
// does not undo that), and otherwise, without taking any:
//   - a *resilience.RefusedError matching ratelimit.ErrLimited at once when
//     the wait would end after ctx's deadline (as Redis's answer arrives),
//     last longer than MaxWait, or take the bucket past the 2^52µs (142
//     years) ahead that Redis keeps (a wait that long is possible at the
//     lowest rates only); its RetryAfter() is that wait;
//   - an error matching ratelimit.ErrExceedsBurst at once if n exceeds the
//     burst: no wait would help;
//   - ctx.Err() at once if ctx is done, as soon as ctx ends during the
//     wait, and when Redis answers if ctx was cancelled while Redis
//     reserved the tokens (a cancellation does not cut that round trip
//     short, which Timeout bounds). The tokens are then given back, in the
//     background, unless a later caller has already reserved tokens
//     behind them (then they stay spent) or the limiter is closed. A
//     deadline that passes during the round trip ends it at once, and the
//     tokens, if Redis reserved them, stay spent.
//
// When Redis is unreachable, the fallback's WaitN decides (see
// [LimiterConfig.FallbackRate]); a fallback that fails closed refuses with
// no RetryAfter hint. WaitN(ctx, 0) returns ctx.Err(). WaitN panics if n <
// 0.
func (l *Limiter) WaitN(ctx context.Context, n int) error {
	p := l.p
	if p == nil {
		zeroValue("Limiter", "WaitN", "NewLimiter")
	}
	if n < 0 {
		panic(fmt.Sprintf("resilienceredis: n must be >= 0, got %d", n))
	}
	if err := ctx.Err(); err != nil || n == 0 || p.inf {
		return err
	}
	if int64(n) > int64(p.cfg.Burst) {
		return fmt.Errorf("%w (%s): %d asked, burst %d", ratelimit.ErrExceedsBurst, p.cfg.Name, n, p.cfg.Burst)
	}
	limit := time.Duration(math.MaxInt64)
	if p.cfg.MaxWait > 0 {
		limit = p.cfg.MaxWait
	}
	if d, ok := ctx.Deadline(); ok {
		limit = max(min(limit, time.Until(d)), 0)
	}
	// No wait may take the bucket past the horizon the scripts keep:
	// 2^52µs ahead, its fill time included.
	maxWait := p.argHorizon
	if limit != math.MaxInt64 {
		maxWait = strconv.FormatInt(min(p.horizon, limit.Microseconds()), 10)
	}
	ok, wait, tat, err := l.reserve(ctx, []any{p.argT, p.argTau, strconv.Itoa(n), maxWait, "tat"})
	switch {
	case err == errLocal:
		p.localN.Add(1)
		p.observe(LimiterLocal, l.key, p.why())
		err := l.localWait(ctx, n)
		if errors.Is(err, ratelimit.ErrLimited) {
			p.refused.Add(1)
		}
		return err
	case err != nil:
		return err
	case !ok:
		p.sharedN.Add(1)
		p.refused.Add(1)
		return resilience.Refuse(ratelimit.ErrLimited, p.cfg.Name, wait)
	}
	p.sharedN.Add(1)
	if err := ctx.Err(); err != nil { // ended as Redis answered
		l.giveBack(ctx, tat, n)
		return err
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
		// Redis measured the wait before the answer's way back: it now
		// ends after the deadline.
		l.giveBack(ctx, tat, n)
		p.refused.Add(1)
		return resilience.Refuse(ratelimit.ErrLimited, p.cfg.Name, wait)
	}
	if wait <= 0 {
		return nil
	}
	due := time.Now().Add(wait)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		if !time.Now().Before(due) {
			return nil // the wait was over as ctx ended: a late wake sees both
		}
		l.giveBack(ctx, tat, n)
		return ctx.Err()
	}
}

// reserve runs WaitN's reservation (the script's args). Its round trip is
// bounded by Timeout and ctx's deadline, not cut short by ctx's
// cancellation: a WaitN cancelled meanwhile learns what it reserved, and
// gives it back.
func (l *Limiter) reserve(ctx context.Context, args []any) (ok bool, wait time.Duration, tat string, err error) {
	if ctx.Done() == nil { // ctx never ends
		return l.eval(ctx, args)
	}
	rctx := context.WithoutCancel(ctx)
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		rctx, cancel = context.WithDeadline(rctx, d)
		defer cancel()
	}
	return l.eval(rctx, args)
}

// giveBack gives back the n tokens that a WaitN reserved, the TAT then
// set to tat, if nobody has reserved tokens behind them: in the
// background, bounded by Timeout, and not once l is closed.
func (l *Limiter) giveBack(ctx context.Context, tat string, n int) {
	ctx = context.WithoutCancel(ctx)
	back := strconv.FormatFloat(l.p.incUs*float64(n), 'g', 17, 64)
	l.p.remote.background(func() { l.p.remote.run(ctx, refundScript, l.keys, []any{tat, back}) })
}

// localWait is the fallback's WaitN.
func (l *Limiter) localWait(ctx context.Context, n int) error {
	p := l.p
	switch {
	case p.failOpen:
		return nil
	case p.failClosed:
		return resilience.Refuse(ratelimit.ErrLimited, p.cfg.Name, -1)
	case p.fbKeyed != nil:
		return p.fbKeyed.Limiter(l.key).WaitN(ctx, n)
	}
	return p.fbOne.WaitN(ctx, n)
}

// LimiterPolicy returns l as a layer of a resilience.Policy[T] that
// refuses at once, as ratelimit.Policy does for a local limiter: each call
// through it takes one token, fleet-wide (one round trip to Redis, at most
// Timeout), and runs the rest of the chain; with no token there, it returns
// a *resilience.RefusedError matching ratelimit.ErrLimited and
// resilience.ErrRefused, with the wait until the next token as RetryAfter
// (no hint when the fallback refused), without running the rest of the
// chain. A call whose ctx is already done returns ctx.Err() and takes no
// token.
//
// The layer is named "ratelimit(Name)". Any number of policies, of any
// result types, may share one l. LimiterPolicy panics if l is nil.
func LimiterPolicy[T any](l *Limiter) resilience.Policy[T] {
	if l == nil {
		panic("resilienceredis: LimiterPolicy of a nil *Limiter")
	}
	if l.p == nil {
		zeroArg("LimiterPolicy", "Limiter", "NewLimiter")
	}
	return resilience.New(l.p.layer, func(ctx context.Context, next resilience.Next[T]) (T, error) {
		if err := l.take(ctx, 1); err != nil {
			var zero T
			return zero, err
		}
		return next.Call(ctx)
	})
}

// WaitPolicy returns l as a layer of a resilience.Policy[T] that waits:
// each call through it takes one token with [Limiter.Wait] and then runs
// the rest of the chain; a refused call returns Wait's error without
// running the rest of the chain. The layer is named "ratelimit(Name)".
// WaitPolicy panics if l is nil.
func WaitPolicy[T any](l *Limiter) resilience.Policy[T] {
	if l == nil {
		panic("resilienceredis: WaitPolicy of a nil *Limiter")
	}
	if l.p == nil {
		zeroArg("WaitPolicy", "Limiter", "NewLimiter")
	}
	return resilience.New(l.p.layer, func(ctx context.Context, next resilience.Next[T]) (T, error) {
		if err := l.Wait(ctx); err != nil {
			var zero T
			return zero, err
		}
		return next.Call(ctx)
	})
}

// observe gives o the event typ of key with err, if there is an Observer.
func (p *limiterParams) observe(typ telemetry.Type, key string, err error) {
	if o := p.cfg.Observer; o != nil {
		o.Observe(telemetry.Event{Type: typ, Name: p.cfg.Name, Key: key, Err: err})
	}
}

// Check asks Redis whether the limiter works there as its documentation
// says, and returns nil if it does, or the errors found, joined:
//   - one matching [ErrUnusable] when Redis refuses the limiter's
//     commands (permissions, the key's type, scripting), or the client's
//     error when Redis does not answer: decisions would be the fallback's;
//   - one matching [ErrEvictionPolicy] when the server may evict the
//     limiter's keys (only checked where the user may run CONFIG GET);
//   - one matching [ErrSettingsConflict] when limiters of the same name
//     with other Rate or Burst are in use: their buckets are apart.
//
// It takes no token; a bucket that holds a value the limiter cannot have
// written is repaired (set empty). It tries the bucket's commands as the
// decisions run them: it reads the bucket as a decision does, then writes
// it as a decision does and puts it back as it was (one script), so that a
// server that lets the limiter read its keys but not write them is found.
// The warnings are also given to the
// Observer, as the checks a limiter makes by itself (at the first decision
// Redis answers, then every minute, in the background) give them. The
// bucket's two round trips each wait at most Timeout, the others as ctx allows
// (and, with a client without ContextTimeoutEnabled, as the client's own
// timeouts do). An infinite Rate never asks Redis:
// Check returns nil. Check is safe to call at any time, from any
// goroutine.
func (l *Limiter) Check(ctx context.Context) error {
	p := l.p
	if p == nil {
		zeroValue("Limiter", "Check", "NewLimiter")
	}
	switch {
	case p.remote.closed.Load():
		return ErrClosed
	case p.inf:
		return nil
	}
	_, _, _, repaired, err := l.script(ctx, []any{p.argT, p.argTau, "0", "0"})
	if err == nil {
		if repaired {
			p.observe(LimiterBucketRepaired, l.key, ErrBadBucket)
		}
		// A check's script reads the bucket; the decisions write it too.
		_, err = p.remote.run(ctx, checkWriteScript, l.keys, []any{p.argTau})
		err = classify(err)
	}
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		return err
	}
	_, err = p.checkServer(ctx)
	return err
}

// Close makes the limiter decide locally for good, as while Redis is
// unreachable: every later decision is its fallback's (see
// [LimiterConfig.FallbackRate]), asks Redis nothing, and emits a
// LimiterLocal event whose Err is [ErrClosed]; its snapshot's State is
// [StateLocal] with Reason ErrClosed's message, and Check returns
// ErrClosed. Close stops the checks of the server running in the
// background and waits for them and for the round trips in flight on
// goroutines of the limiter, cancelled Waits' refunds included (one that
// outlived Timeout ends when the client gives it up). It does not close rdb. On a Limiter of a
// [KeyedLimiter] (from [KeyedLimiter.Limiter]) Close does nothing: its
// state is the KeyedLimiter's, which [KeyedLimiter.Close] closes. Close
// returns nil; calling it again does nothing. It is safe to call at any
// time, from any goroutine.
func (l *Limiter) Close() error {
	if l.view || l.p == nil {
		return nil
	}
	l.p.close()
	return nil
}

// Close closes k and each of its Limiters, as [Limiter.Close] describes.
func (k *KeyedLimiter) Close() error {
	if k.p == nil {
		return nil
	}
	k.p.close()
	return nil
}

func (p *limiterParams) close() {
	if !p.remote.close() {
		return
	}
	p.stop()
	p.checks.Wait()
	p.remote.wg.Wait()
}

// Check is [Limiter.Check] for every bucket of k: it asks Redis with a
// bucket of its own (key ""), which it does not change.
func (k *KeyedLimiter) Check(ctx context.Context) error {
	if k.p == nil {
		zeroValue("KeyedLimiter", "Check", "NewKeyedLimiter")
	}
	return k.Limiter("").Check(ctx)
}

// checkServer checks the server's eviction policy and records the
// limiter's settings among those in use under its name; it reports what
// it finds to the Observer and returns it, with the error of a round
// trip that failed; done is false if the settings could not be recorded.
// Its round trips wait as ctx allows: it runs in the background, or in
// Check, not in a decision.
func (p *limiterParams) checkServer(ctx context.Context) (done bool, err error) {
	var errs []error
	if err := p.checkEviction(ctx); err != nil {
		p.observe(LimiterEvictionUnsafe, "", err)
		errs = append(errs, err)
	}
	v, err := settingsScript.Run(ctx, p.remote.rdb, p.setKey, p.fp, strconv.FormatInt(settingsHorizon.Microseconds(), 10)).Result()
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			err = cerr
		}
		return false, errors.Join(append(errs, classify(err))...)
	}
	all, _ := v.([]any)
	var others []string
	for _, o := range all {
		if o, _ := o.(string); o != p.fp {
			others = append(others, o)
		}
	}
	if len(others) > 0 {
		err := fmt.Errorf("%w: %q (rate/burst) here, also %q in use within %v, each in a bucket of its own",
			ErrSettingsConflict, p.fp, others, settingsHorizon)
		p.observe(LimiterSettingsConflict, "", err)
		errs = append(errs, err)
	}
	return true, errors.Join(errs...)
}

// checkEviction returns an error matching ErrEvictionPolicy if the server
// may evict the limiter's keys: maxmemory set, and a maxmemory-policy
// other than noeviction (every bucket key carries a TTL, so the volatile
// policies evict them as the allkeys ones do). A server that does not let
// the user run CONFIG GET, or does not answer, is not checked: nil.
func (p *limiterParams) checkEviction(ctx context.Context) error {
	conf, err := p.remote.rdb.ConfigGet(ctx, "maxmemory*").Result()
	if err != nil {
		return nil
	}
	policy, mem := conf["maxmemory-policy"], conf["maxmemory"]
	if policy == "" || policy == "noeviction" || mem == "0" || mem == "" {
		return nil
	}
	return fmt.Errorf("%w: maxmemory-policy %s with maxmemory %s evicts keys with a TTL, as every bucket's is: an evicted bucket is full again (set noeviction)",
		ErrEvictionPolicy, policy, mem)
}
