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

// atMostScript takes up to ARGV[3] events' tokens from the bucket KEYS[1]
// now: as many as it holds, at most ARGV[3] (T = ARGV[1] µs per event,
// Burst·T = ARGV[2]), as gcraScript keeps the bucket (the same TAT, the
// same repair of a value the scripts cannot have written). With TAT =
// max(stored, now), the bucket holds k events when TAT + k·T - now <=
// Burst·T. It returns {k, 0, repaired} with k >= 1 taken, or {0, the wait
// µs until one event's token, repaired}.
var atMostScript = redis.NewScript(`
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
local k = math.floor((now + tau - tat) / T)
if k > 0 and tat + k * T - now > tau then k = k - 1 end
if k + 1 <= n and tat + (k + 1) * T - now <= tau then k = k + 1 end
if k > n then k = n end
if k < 1 then
	return {0, math.max(math.ceil(tat + T - now - tau), 1), bad}
end
local new = tat + k * T
redis.call('SET', KEYS[1], string.format('%.17g', new), 'PX', math.ceil((new - now) / 1000))
return {k, 0, bad}
`)

// AllowAtMost takes up to n tokens now, fleet-wide: as many as the bucket
// holds, at most n, in one script (atomic in Redis: two instances never
// take the same token), and returns how many it took. It never waits for
// a token; it waits on Redis at most Timeout. It returns:
//   - k in [1, n] and nil: k tokens taken; k < n when the bucket held
//     fewer, and never more than Burst (an n above the burst takes what
//     the bucket holds, where AllowN would refuse);
//   - 0 and a *resilience.RefusedError matching ratelimit.ErrLimited (and
//     resilience.ErrRefused) when the bucket holds no token, with the wait
//     until the next one as RetryAfter (no hint when the fallback
//     refused);
//   - 0 and ctx.Err() when ctx is done (or ends during the round trip),
//     with no token taken.
//
// n = 0 takes nothing and asks nothing: 0, nil (as AllowN(ctx, 0) is
// true). An infinite Rate takes n at once: n, nil. AllowAtMost panics if
// n < 0, as AllowN and WaitN do. When Redis is unreachable the fallback decides, as for
// AllowN, with a LimiterLocal event: a local bucket takes what it holds
// (under contention with other goroutines of the instance it may take
// less than it held a moment before, never more than n), a fallback that
// fails open takes n, one that fails closed refuses.
func (l *Limiter) AllowAtMost(ctx context.Context, n int) (int, error) {
	p := l.p
	if p == nil {
		zeroValue("Limiter", "AllowAtMost", "NewLimiter")
	}
	switch {
	case n < 0:
		panic(fmt.Sprintf("resilienceredis: n must be >= 0, got %d", n))
	case n == 0:
		return 0, nil
	case p.inf:
		return n, nil
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	k, wait, err := l.evalAtMost(ctx, n)
	switch {
	case err == errLocal:
		p.localN.Add(1)
		p.observe(LimiterLocal, l.key, p.why())
		if k = l.localAtMost(n); k > 0 {
			return k, nil
		}
		p.refused.Add(1)
		return 0, resilience.Refuse(ratelimit.ErrLimited, p.cfg.Name, -1)
	case err != nil:
		return 0, err
	}
	p.sharedN.Add(1)
	if k == 0 {
		p.refused.Add(1)
		return 0, resilience.Refuse(ratelimit.ErrLimited, p.cfg.Name, wait)
	}
	return k, nil
}

// AllowAtMost takes up to n tokens of key's bucket now:
// Limiter(key).AllowAtMost(ctx, n).
func (k *KeyedLimiter) AllowAtMost(ctx context.Context, key string, n int) (int, error) {
	if k.p == nil {
		zeroValue("KeyedLimiter", "AllowAtMost", "NewKeyedLimiter")
	}
	return k.Limiter(key).AllowAtMost(ctx, n)
}

// evalAtMost runs atMostScript for up to n events, as eval runs the GCRA
// script: it returns the tokens taken and, with none, the wait until one;
// errLocal when Redis was not asked or failed (p.why() says why), or
// ctx.Err().
func (l *Limiter) evalAtMost(ctx context.Context, n int) (k int, wait time.Duration, err error) {
	p := l.p
	var reply []any
	if err := l.ask(ctx, func() error {
		v, err := p.remote.run(ctx, atMostScript, l.keys, []any{p.argT, p.argTau, strconv.Itoa(n)})
		if err == nil {
			if reply, _ = v.([]any); len(reply) < 3 {
				err = fmt.Errorf("%w: the script's reply %v is not {taken, wait, repaired}", ErrUnusable, v)
			}
		}
		if err != nil {
			return classify(err)
		}
		return nil
	}); err != nil {
		return 0, 0, err
	}
	taken, _ := reply[0].(int64)
	us, _ := reply[1].(int64)
	if fixed, _ := reply[2].(int64); fixed == 1 {
		p.observe(LimiterBucketRepaired, l.key, ErrBadBucket)
	}
	wait = time.Duration(max(us, 1)) * time.Microsecond
	if us > math.MaxInt64/int64(time.Microsecond) {
		wait = math.MaxInt64
	}
	return int(taken), wait, nil
}

// localAtMost is the fallback's AllowAtMost: the tokens it took.
func (l *Limiter) localAtMost(n int) int {
	p := l.p
	switch {
	case p.failOpen:
		return n
	case p.failClosed:
		return 0
	}
	fb := p.fbOne
	if p.fbKeyed != nil {
		fb = p.fbKeyed.Limiter(l.key)
	}
	// Another goroutine may take tokens between the reading and the
	// taking: try again with what is left, a few times.
	for range 3 {
		k := int(min(math.Floor(fb.Tokens()), float64(n)))
		if k <= 0 {
			return 0
		}
		if fb.AllowN(k) {
			return k
		}
	}
	return 0
}
