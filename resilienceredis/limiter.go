package resilienceredis

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
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
// for the wait the caller accepts (0 for Allow), sets TAT to
// max(TAT, now) + n·T, and makes the key expire when the bucket is full
// again (PEXPIRE at TAT), so an idle tenant costs Redis nothing. It
// returns {1, wait µs, TAT} or, refused, {0, the wait µs until the events
// would pass}; the TAT only when ARGV[5] asks for it (a Wait, which may
// give its tokens back). redis.Script runs it with EVALSHA and falls back to EVAL
// when the server does not have it (NOSCRIPT).
var gcraScript = redis.NewScript(`
local t = redis.call('TIME')
local now = (t[1] - 1704067200) * 1000000 + t[2]
local tat = tonumber(redis.call('GET', KEYS[1]) or 0)
if tat < now then tat = now end
local new = tat + tonumber(ARGV[1]) * tonumber(ARGV[3])
local wait = new - now - tonumber(ARGV[2])
if wait > tonumber(ARGV[4]) then
	return {0, math.ceil(wait)}
end
if ARGV[5] then
	local s = string.format('%.17g', new)
	redis.call('SET', KEYS[1], s, 'PX', math.ceil((new - now) / 1000))
	return {1, math.ceil(wait), s}
end
redis.call('SET', KEYS[1], new, 'PX', math.ceil((new - now) / 1000))
return {1, math.ceil(wait)}
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

// limiterParams is what every bucket of one limiter shares; immutable but
// for the remote's health.
type limiterParams struct {
	cfg     LimiterConfig
	inf     bool
	layer   string
	remote  remote
	incUs   float64 // T, µs per event
	argT    string  // T, as the script reads it
	argTau  string  // Burst·T µs
	prefix  string  // of the keys
	oneArgs []any   // the arguments of Allow: one event, no wait

	// The fallback while Redis is unreachable: one bucket, or one per key;
	// neither when it fails open or closed.
	fbOne                *ratelimit.Limiter
	fbKeyed              *ratelimit.Keyed[string]
	failOpen, failClosed bool
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
// with [NewLimiter], or get one per key from a [KeyedLimiter].
type Limiter struct {
	p    *limiterParams
	keys []string // the bucket's Redis key
	key  string   // the tenant, for a KeyedLimiter's fallback
}

// NewLimiter returns the fleet-wide token bucket named name on rdb, which
// refills at rate events per second up to burst. Every instance that
// builds a limiter of the same name, prefix, rate and burst on the same
// Redis shares its bucket. Its key is Prefix+"rl:{name}": a hash tag, so
// a Redis Cluster keeps it on one node like any single key.
//
// NewLimiter panics if an option is nil or the configuration is invalid
// (see [LimiterConfig.Validate]), with a message naming the field and the
// value, e.g. "resilienceredis: Burst must be in [1, 1<<40], got 0".
func NewLimiter(rdb redis.UniversalClient, name string, rate float64, burst int, opts ...LimiterOption) *Limiter {
	p := newLimiterParams(rdb, name, rate, burst, opts, false)
	return &Limiter{p: p, keys: []string{p.prefix + "{" + p.cfg.Name + "}"}}
}

// KeyedLimiter is a fleet-wide token bucket per key (a tenant, a client),
// all with the same configuration: [KeyedLimiter.Limiter] returns one
// key's bucket. Each key is one Redis key, Prefix+"rl:"+Name+":{"+key+"}",
// that expires when its bucket is full again, so idle keys cost Redis
// nothing and the number of keys is not bounded by the limiter. The key is
// a hash tag, so a Redis Cluster spreads tenants over its nodes.
//
// A KeyedLimiter is safe for simultaneous use by multiple goroutines.
// Create one with [NewKeyedLimiter].
type KeyedLimiter struct {
	p *limiterParams
}

// NewKeyedLimiter returns a KeyedLimiter named name on rdb whose buckets
// each refill at rate events per second up to burst, as [NewLimiter]
// describes. While Redis is unreachable each key has a bucket of its own
// in the instance (a ratelimit.Keyed, at most 8192 keys). It panics on an
// invalid configuration, as NewLimiter does.
func NewKeyedLimiter(rdb redis.UniversalClient, name string, rate float64, burst int, opts ...LimiterOption) *KeyedLimiter {
	return &KeyedLimiter{p: newLimiterParams(rdb, name, rate, burst, opts, true)}
}

// Limiter returns key's bucket. It costs one small allocation; the
// Limiter may be kept and used for as long as needed.
func (k *KeyedLimiter) Limiter(key string) *Limiter {
	return &Limiter{p: k.p, keys: []string{k.p.prefix + k.p.cfg.Name + ":{" + key + "}"}, key: key}
}

// Allow reports whether one event for key may happen now, fleet-wide, and
// takes its token if so: Limiter(key).Allow(ctx).
func (k *KeyedLimiter) Allow(ctx context.Context, key string) bool {
	return k.Limiter(key).Allow(ctx)
}

func newLimiterParams(rdb redis.UniversalClient, name string, rate float64, burst int, opts []LimiterOption, keyed bool) *limiterParams {
	if rdb == nil {
		panic("resilienceredis: NewLimiter client must not be nil")
	}
	cfg := LimiterConfig{Name: name, Rate: rate, Burst: burst}
	for _, o := range opts {
		if o == nil {
			panic("resilienceredis: NewLimiter option must not be nil")
		}
		o.applyLimiter(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		panic(err.Error())
	}
	p := &limiterParams{cfg: cfg, inf: math.IsInf(cfg.Rate, 1), layer: "ratelimit(" + cfg.Name + ")"}
	p.remote = newRemote(rdb, cmp0(cfg.Timeout, defaultTimeout), cmp0(cfg.ProbeInterval, defaultProbe))
	prefix := cfg.Prefix
	if prefix == "" {
		prefix = defaultPrefix
	}
	p.prefix = prefix + "rl:"
	if !p.inf {
		p.incUs = 1e6 / cfg.Rate
		p.argT = strconv.FormatFloat(p.incUs, 'g', 17, 64)
		p.argTau = strconv.FormatFloat(p.incUs*float64(cfg.Burst), 'g', 17, 64)
		p.oneArgs = []any{p.argT, p.argTau, "1", "0"}
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
func (l *Limiter) Name() string { return l.p.cfg.Name }

// Allow reports whether one event may happen now, fleet-wide, and takes
// its token if so. It never waits for a token; it waits on Redis at most
// Timeout. A ctx that is done (or ends during the round trip) makes it
// return false without a token taken.
func (l *Limiter) Allow(ctx context.Context) bool { return l.AllowN(ctx, 1) }

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
	switch {
	case n < 0:
		panic(fmt.Sprintf("resilienceredis: n must be >= 0, got %d", n))
	case n == 0 || p.inf:
		return nil
	case int64(n) > int64(p.cfg.Burst):
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
		if l.localAllow(n) {
			return nil
		}
		return resilience.Refuse(ratelimit.ErrLimited, p.cfg.Name, -1)
	case err != nil:
		return err
	case !ok:
		return resilience.Refuse(ratelimit.ErrLimited, p.cfg.Name, wait)
	}
	return nil
}

// errLocal says that Redis was not asked, or did not answer in time: the
// fallback decides.
var errLocal = fmt.Errorf("resilienceredis: deciding locally")

// eval runs the GCRA script with args. It returns whether the events were
// admitted, the wait (until they were or would be there), the TAT set, or
// errLocal when Redis was not asked or failed, or ctx.Err().
func (l *Limiter) eval(ctx context.Context, args []any) (ok bool, wait time.Duration, tat string, err error) {
	r := &l.p.remote
	now := time.Now().UnixNano()
	if !r.usable(now) {
		return false, 0, "", errLocal
	}
	v, err := r.run(ctx, gcraScript, l.keys, args)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return false, 0, "", cerr
		}
		r.failed(now)
		return false, 0, "", errLocal
	}
	r.answered()
	reply, _ := v.([]any)
	if len(reply) < 2 {
		r.failed(now)
		return false, 0, "", errLocal
	}
	admitted, _ := reply[0].(int64)
	us, _ := reply[1].(int64)
	wait = time.Duration(max(us, 0)) * time.Microsecond
	if admitted == 1 {
		if len(reply) == 3 {
			tat, _ = reply[2].(string)
		}
		return true, wait, tat, nil
	}
	return false, wait, "", nil
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
func (l *Limiter) Wait(ctx context.Context) error { return l.WaitN(ctx, 1) }

// WaitN takes n tokens, fleet-wide, waiting until they are there. The
// tokens are reserved in Redis at once (other instances' calls queue
// behind them), and WaitN sleeps until they are due. It returns nil once
// they are taken, and otherwise, without taking any:
//   - a *resilience.RefusedError matching ratelimit.ErrLimited at once when
//     the wait would end after ctx's deadline or last longer than MaxWait;
//     its RetryAfter() is that wait;
//   - an error matching ratelimit.ErrExceedsBurst at once if n exceeds the
//     burst: no wait would help;
//   - ctx.Err() at once if ctx is done, or as soon as ctx ends during the
//     wait. The tokens are then given back, unless a later caller has
//     already reserved tokens behind them (then they stay spent).
//
// When Redis is unreachable, the fallback's WaitN decides (see
// [LimiterConfig.FallbackRate]); a fallback that fails closed refuses with
// no RetryAfter hint. WaitN(ctx, 0) returns ctx.Err(). WaitN panics if n <
// 0.
func (l *Limiter) WaitN(ctx context.Context, n int) error {
	p := l.p
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
	maxWait := "1e300"
	if limit != math.MaxInt64 {
		maxWait = strconv.FormatInt(limit.Microseconds(), 10)
	}
	ok, wait, tat, err := l.eval(ctx, []any{p.argT, p.argTau, strconv.Itoa(n), maxWait, "tat"})
	switch {
	case err == errLocal:
		return l.localWait(ctx, n)
	case err != nil:
		return err
	case !ok:
		return resilience.Refuse(ratelimit.ErrLimited, p.cfg.Name, wait)
	case wait <= 0:
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		// Give the tokens back if nobody reserved behind them; bounded,
		// and under a context that the caller's end does not cancel.
		back := strconv.FormatFloat(l.p.incUs*float64(n), 'g', 17, 64)
		l.p.remote.run(context.WithoutCancel(ctx), refundScript, l.keys, []any{tat, back})
		return ctx.Err()
	}
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
	return resilience.New(l.p.layer, func(ctx context.Context, next resilience.Next[T]) (T, error) {
		if err := l.Wait(ctx); err != nil {
			var zero T
			return zero, err
		}
		return next.Call(ctx)
	})
}
