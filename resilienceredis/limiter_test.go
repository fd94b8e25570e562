package resilienceredis

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/eventlog"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
)

// slow is a rate so low that no token comes back during a test.
const slow = 0.01 // one event per 100s

func TestLimiterBurstThenRefuses(t *testing.T) {
	ctx := ctxFor(t)
	l := NewLimiter(newClient(t), "api", slow, 3, WithPrefix(testPrefix(t)))
	var got []bool
	for range 5 {
		got = append(got, l.Allow(ctx))
	}
	if diff := cmp.Diff([]bool{true, true, true, false, false}, got); diff != "" {
		t.Errorf("Allow results mismatch (-want +got):\n%s", diff)
	}
}

func TestLimiterRefusalCarriesRetryAfter(t *testing.T) {
	ctx := ctxFor(t)
	l := NewLimiter(newClient(t), "api", slow, 1, WithPrefix(testPrefix(t)))
	p := LimiterPolicy[int](l)
	op := func(context.Context) (int, error) { return 7, nil }
	if v, err := p.Do(ctx, op); v != 7 || err != nil {
		t.Fatalf("first call = %v, %v; want 7, nil", v, err)
	}
	_, err := p.Do(ctx, op)
	var re *resilience.RefusedError
	if !errors.As(err, &re) || !errors.Is(err, ratelimit.ErrLimited) || !errors.Is(err, resilience.ErrRefused) {
		t.Fatalf("second call's error = %v; want a *resilience.RefusedError matching ratelimit.ErrLimited", err)
	}
	// One token every 100s, the last taken just now: the wait is at most
	// 100s and, a round trip later, not much less.
	if d := re.RetryAfter(); d > 100*time.Second || d < 90*time.Second {
		t.Errorf("RetryAfter() = %v, want about 100s (at most)", d)
	}
	if re.Name() != "api" || p.String() != "ratelimit(api)" {
		t.Errorf("Name() = %q, layer %q; want api, ratelimit(api)", re.Name(), p.String())
	}
}

// Instances with separate clients share one bucket: of 40 concurrent
// calls over 4 instances, exactly Burst pass.
func TestLimiterIsFleetWide(t *testing.T) {
	ctx := ctxFor(t)
	prefix := testPrefix(t)
	var limiters []*Limiter
	for range 4 {
		limiters = append(limiters, NewLimiter(newClient(t), "fleet", slow, 10, WithPrefix(prefix), WithTimeout(5*time.Second)))
	}
	var passed atomic.Int64
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			if limiters[i%4].Allow(ctx) {
				passed.Add(1)
			}
		})
	}
	wg.Wait()
	if got := passed.Load(); got != 10 {
		t.Errorf("%d of 40 calls over 4 instances passed, want the burst, 10", got)
	}
}

// The bucket's key expires when the bucket is full again, and holds the
// server's time (µs since 2024-01-01) plus one interval after one event.
func TestLimiterKeyExpiresWhenFull(t *testing.T) {
	ctx := ctxFor(t)
	rdb := newClient(t)
	prefix := testPrefix(t)
	l := NewLimiter(rdb, "exp", 10, 5, WithPrefix(prefix)) // T = 100ms
	key := prefix + "rl:{exp}:10/5"                        // the settings, rate/burst, in the key
	if !l.Allow(ctx) {
		t.Fatal("the first Allow of a full bucket was refused")
	}
	pttl, err := rdb.PTTL(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	if pttl <= 0 || pttl > 100*time.Millisecond {
		t.Errorf("PTTL after one event = %v, want in (0, 100ms]: the time until the bucket is full", pttl)
	}
	tatStr, err := rdb.Get(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	tm, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	tat, _ := strconv.ParseFloat(tatStr, 64)
	server := float64(tm.Sub(time.Unix(1704067200, 0)).Microseconds())
	if d := tat - server; d <= 0 || d > 100_000 {
		t.Errorf("TAT - server time = %vµs, want in (0, 100000]: the TAT is kept in the server's time", d)
	}
	redistest.Eventually(t, 5*time.Second, "the key expires", func() (bool, string) {
		n, err := rdb.Exists(ctx, key).Result()
		return err == nil && n == 0, "EXISTS = " + strconv.FormatInt(n, 10)
	})
}

// The script runs by EVALSHA and falls back to EVAL when the server lost
// it (NOSCRIPT), which loads it again.
func TestLimiterFallsBackToEvalOnNoScript(t *testing.T) {
	ctx := ctxFor(t)
	rdb := newClient(t)
	l := NewLimiter(rdb, "noscript", slow, 2, WithPrefix(testPrefix(t)))
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if !l.Allow(ctx) {
		t.Fatal("Allow after SCRIPT FLUSH was refused")
	}
	exists, err := rdb.ScriptExists(ctx, gcraScript.Hash()).Result()
	if err != nil || len(exists) != 1 || !exists[0] {
		t.Errorf("SCRIPT EXISTS after the call = %v, %v; want [true]: EVAL loads it", exists, err)
	}
	if !l.Allow(ctx) || l.Allow(ctx) {
		t.Error("after the reload the bucket does not count on: want true, false")
	}
}

func TestLimiterAllowN(t *testing.T) {
	ctx := ctxFor(t)
	l := NewLimiter(newClient(t), "n", slow, 5, WithPrefix(testPrefix(t)))
	got := []bool{l.AllowN(ctx, 0), l.AllowN(ctx, 6), l.AllowN(ctx, 3), l.AllowN(ctx, 3), l.AllowN(ctx, 2), l.AllowN(ctx, 1)}
	if diff := cmp.Diff([]bool{true, false, true, false, true, false}, got); diff != "" {
		t.Errorf("AllowN(0, 6, 3, 3, 2, 1) mismatch (-want +got):\n%s", diff)
	}
	defer func() {
		if r := recover(); r != "resilienceredis: n must be >= 0, got -1" {
			t.Errorf("AllowN(-1) panicked with %v", r)
		}
	}()
	l.AllowN(ctx, -1)
}

func TestLimiterDoneContext(t *testing.T) {
	l := NewLimiter(newClient(t), "ctx", slow, 1, WithPrefix(testPrefix(t)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if l.Allow(ctx) {
		t.Error("Allow with a done ctx = true")
	}
	_, err := LimiterPolicy[int](l).Do(ctx, func(context.Context) (int, error) { return 1, nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Policy with a done ctx: %v, want context.Canceled", err)
	}
	if !l.Allow(context.Background()) {
		t.Error("the token was spent by calls whose ctx was done")
	}
}

func TestLimiterWait(t *testing.T) {
	ctx := ctxFor(t)
	rdb := newClient(t)
	prefix := testPrefix(t)
	// T = 200ms: the test's margin for the scheduling of a loaded machine.
	l := NewLimiter(rdb, "wait", 5, 1, WithPrefix(prefix))

	if err := l.Wait(ctx); err != nil {
		t.Fatalf("Wait on a full bucket: %v", err)
	}
	// The next token is up to 200ms away: it is reserved, so the bucket is
	// empty right after Wait returns.
	if err := l.Wait(ctx); err != nil {
		t.Fatalf("Wait for the next token: %v", err)
	}
	if l.Allow(ctx) {
		t.Error("Allow right after a Wait took the token = true")
	}

	short := NewLimiter(rdb, "wait", 5, 1, WithPrefix(prefix), WithMaxWait(time.Millisecond))
	err := short.Wait(ctx)
	var re *resilience.RefusedError
	if !errors.As(err, &re) || !errors.Is(err, ratelimit.ErrLimited) || re.RetryAfter() <= time.Millisecond || re.RetryAfter() > 400*time.Millisecond {
		t.Errorf("Wait beyond MaxWait: %v; want a refusal with RetryAfter in (1ms, 400ms]", err)
	}

	dctx, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	if err := l.Wait(dctx); !errors.Is(err, ratelimit.ErrLimited) && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait beyond the deadline: %v, want ErrLimited (or the deadline itself)", err)
	}

	if err := l.WaitN(ctx, 2); !errors.Is(err, ratelimit.ErrExceedsBurst) || errors.Is(err, resilience.ErrRefused) {
		t.Errorf("WaitN above the burst: %v, want ErrExceedsBurst, not a refusal", err)
	}
}

func TestKeyedLimiter(t *testing.T) {
	ctx := ctxFor(t)
	rdb := newClient(t)
	prefix := testPrefix(t)
	k := NewKeyedLimiter(rdb, "tenants", slow, 2, WithPrefix(prefix))
	other := NewKeyedLimiter(newClient(t), "tenants", slow, 2, WithPrefix(prefix)) // another instance
	got := []bool{k.Allow(ctx, "a"), other.Allow(ctx, "a"), k.Allow(ctx, "a"), k.Allow(ctx, "b"), other.Limiter("b").Allow(ctx)}
	if diff := cmp.Diff([]bool{true, true, false, true, true}, got); diff != "" {
		t.Errorf("per-tenant decisions mismatch (-want +got):\n%s", diff)
	}
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	// A bucket per tenant, and the settings in use under the name (written
	// by the check that the first decision starts in the background).
	want := map[string]bool{prefix + "rl:tenants:0.01/2:{a}": true, prefix + "rl:tenants:0.01/2:{b}": true, prefix + "rl:tenants:settings": true}
	for _, key := range keys {
		if !want[key] {
			t.Errorf("unexpected key %q", key)
		}
		if ttl, _ := rdb.PTTL(ctx, key).Result(); ttl <= 0 {
			t.Errorf("key %q has no expiry (PTTL %v)", key, ttl)
		}
	}
	for key := range want {
		if n, _ := rdb.Exists(ctx, key).Result(); n != 1 && !strings.HasSuffix(key, ":settings") {
			t.Errorf("no key %q", key)
		}
	}
}

// deadAddr returns a loopback address where nothing listens.
func deadAddr(t *testing.T) string {
	s := redistest.Start(t)
	s.Kill(t)
	return s.Addr
}

// Redis unreachable: decisions are the fallback's, within the timeout.
func TestLimiterFallback(t *testing.T) {
	ctx := ctxFor(t)
	rdb := clientOf(t, deadAddr(t))
	tests := []struct {
		name string
		opts []LimiterOption
		want []bool
	}{
		{"default: the same limit, per instance", nil, []bool{true, true, false, false}},
		{"own limit", []LimiterOption{WithFallback(slow, 1)}, []bool{true, false, false, false}},
		{"fail open", []LimiterOption{WithFallback(math.Inf(1), 0)}, []bool{true, true, true, true}},
		{"fail closed", []LimiterOption{WithFallback(resilience.Off, 0)}, []bool{false, false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLimiter(rdb, "down", slow, 2, tt.opts...)
			var got []bool
			for range 4 {
				got = append(got, l.Allow(ctx))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decisions with Redis down mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// An infinite rate admits everything without asking Redis.
func TestLimiterInfiniteRate(t *testing.T) {
	l := NewLimiter(clientOf(t, deadAddr(t)), "inf", math.Inf(1), 0, WithFallback(resilience.Off, 0))
	for range 3 {
		if !l.Allow(ctxFor(t)) || l.Wait(ctxFor(t)) != nil {
			t.Fatal("an infinite rate refused")
		}
	}
}

// A stalled server (SIGSTOP) holds no decision longer than the timeout:
// the fallback decides, and for ProbeInterval the decisions do not ask
// Redis at all; once the server continues, the fleet's bucket decides
// again.
func TestLimiterStalledServer(t *testing.T) {
	for _, ctxTimeouts := range []bool{false, true} {
		t.Run("ContextTimeoutEnabled="+strconv.FormatBool(ctxTimeouts), func(t *testing.T) {
			s := redistest.Start(t)
			// The client's own timeouts are 30s (stallClient): only the
			// limiter's Timeout can end a wait on the stalled server.
			rdb := stallClient(t, s.Addr, ctxTimeouts)
			ctx := ctxFor(t)
			l := NewLimiter(rdb, "stall", slow, 1, WithTimeout(faultTimeout), WithProbeInterval(100*time.Millisecond), WithFallback(resilience.Off, 0))
			if l.p.remote.inline != ctxTimeouts {
				t.Fatalf("inline = %v for a client with ContextTimeoutEnabled %v", l.p.remote.inline, ctxTimeouts)
			}
			if !l.Allow(ctx) || l.Allow(ctx) {
				t.Fatal("with the server up: want true then false")
			}
			s.Pause(t)
			for i := range 5 {
				start := time.Now()
				if l.Allow(ctx) {
					t.Errorf("call %d while stalled passed; the fallback fails closed", i)
				}
				// Timeout is the contract, faultMargin the scheduling of a
				// loaded machine; a wait Timeout did not end lasts 30s.
				if d := time.Since(start); d > faultTimeout+faultMargin {
					t.Errorf("call %d while stalled took %v, want at most Timeout (%v; %v with the margin of a loaded machine)", i, d, faultTimeout, faultTimeout+faultMargin)
				}
			}
			s.Resume(t)
			// Once the probe interval has passed, a decision asks Redis
			// again: the shared bucket is still empty there.
			open := NewLimiter(rdb, "stall", slow, 1, WithTimeout(time.Second), WithFallback(math.Inf(1), 0))
			if open.Allow(ctx) {
				t.Error("after the stall, the shared bucket is still empty: want a refusal from Redis")
			}
		})
	}
}

func TestLimiterPolicyPanicsOnNil(t *testing.T) {
	closed := redis.NewClient(&redis.Options{})
	closed.Close()
	for name, want := range map[string]string{
		"LimiterPolicy": "resilienceredis: LimiterPolicy of a nil *Limiter",
		"WaitPolicy":    "resilienceredis: WaitPolicy of a nil *Limiter",
	} {
		func() {
			defer func() {
				if r := recover(); r != want {
					t.Errorf("%s(nil) panicked with %v, want %q", name, r, want)
				}
			}()
			if name == "LimiterPolicy" {
				LimiterPolicy[int](nil)
			} else {
				WaitPolicy[int](nil)
			}
		}()
	}
	for name, f := range map[string]func(){
		"LimiterPolicy": func() { LimiterPolicy[int](nil) },
		"WaitPolicy":    func() { WaitPolicy[int](nil) },
		"NewLimiter":    func() { NewLimiter(nil, "x", 1, 1) },
		"nil option":    func() { NewLimiter(closed, "x", 1, 1, nil) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}

// With Redis down, a KeyedLimiter's fallback keeps a bucket per key.
func TestKeyedLimiterFallbackPerKey(t *testing.T) {
	ctx := ctxFor(t)
	k := NewKeyedLimiter(clientOf(t, deadAddr(t)), "down", slow, 1)
	got := []bool{k.Allow(ctx, "a"), k.Allow(ctx, "a"), k.Allow(ctx, "b")}
	if diff := cmp.Diff([]bool{true, false, true}, got); diff != "" {
		t.Errorf("per-key fallback decisions mismatch (-want +got):\n%s", diff)
	}
}

// Redis unreachable: Wait is the fallback's WaitN, each decision a
// LimiterLocal event counted as local: a local bucket gives what it holds
// and refuses a wait beyond the caller's deadline; a fallback that fails
// open admits; one that fails closed refuses with no RetryAfter hint. A
// KeyedLimiter's fallback waits per key.
func TestLimiterWaitFallback(t *testing.T) {
	rdb := clientOf(t, deadAddr(t))
	tests := []struct {
		name    string
		opts    []LimiterOption
		want    []string // per Wait: "ok", "limited"
		refused uint64
	}{
		{"default: the same limit, per instance", nil, []string{"ok", "ok", "limited"}, 1},
		{"fail open", []LimiterOption{WithFallback(math.Inf(1), 0)}, []string{"ok", "ok", "ok"}, 0},
		{"fail closed", []LimiterOption{WithFallback(resilience.Off, 0)}, []string{"limited", "limited", "limited"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec eventlog.Recorder
			l := NewLimiter(rdb, "waitdown", slow, 2, append(tt.opts, WithObserver(&rec))...)
			var got []string
			for range 3 {
				// A deadline the next local token (100s away) is beyond.
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				err := l.Wait(ctx)
				cancel()
				var re *resilience.RefusedError
				switch {
				case err == nil:
					got = append(got, "ok")
				case errors.As(err, &re) && errors.Is(err, ratelimit.ErrLimited):
					got = append(got, "limited")
					if tt.name == "fail closed" && re.RetryAfter() >= 0 {
						t.Errorf("the closed fallback's refusal has RetryAfter %v, want no hint (negative)", re.RetryAfter())
					}
				default:
					got = append(got, err.Error())
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Wait with Redis down mismatch (-want +got):\n%s", diff)
			}
			if n := len(ofType(&rec, LimiterLocal)); n != 3 {
				t.Errorf("%d %s events for 3 local decisions", n, LimiterLocal)
			}
			s := l.Snapshot()
			if diff := cmp.Diff(map[string]float64{"local": 1, "decisions_shared": 0, "decisions_local": 3}, values(t, s)); diff != "" || s.Refused != tt.refused {
				t.Errorf("Snapshot refused %d, want %d; values mismatch (-want +got):\n%s", s.Refused, tt.refused, diff)
			}
		})
	}
	t.Run("keyed", func(t *testing.T) {
		k := NewKeyedLimiter(rdb, "waitdownkeyed", slow, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		got := []bool{k.Limiter("a").Wait(ctx) == nil, k.Limiter("a").Wait(ctx) == nil, k.Limiter("b").Wait(ctx) == nil}
		if diff := cmp.Diff([]bool{true, false, true}, got); diff != "" {
			t.Errorf("per-key fallback Wait mismatch (-want +got):\n%s", diff)
		}
	})
}

// An n above the burst is refused without asking Redis, with RetryAfter
// resilience.Never (no wait would help), and counted as a refusal.
func TestLimiterAboveBurstIsRefusedForGood(t *testing.T) {
	l := NewLimiter(clientOf(t, deadAddr(t)), "aboveburst", slow, 2)
	err := l.take(ctxFor(t), 3)
	var re *resilience.RefusedError
	if !errors.As(err, &re) || !errors.Is(err, ratelimit.ErrLimited) || re.RetryAfter() != resilience.Never {
		t.Errorf("3 events of a burst of 2: %v; want a refusal with RetryAfter resilience.Never", err)
	}
	s := l.Snapshot()
	if diff := cmp.Diff(map[string]float64{"local": 0, "decisions_shared": 0, "decisions_local": 0}, values(t, s)); diff != "" || s.Refused != 1 {
		t.Errorf("Snapshot refused %d, want 1; values mismatch (-want +got):\n%s", s.Refused, diff)
	}
}

// With Redis unreachable, LimiterPolicy's refusal by a fallback that
// fails closed gives no RetryAfter hint.
func TestLimiterPolicyFallbackRefusalHasNoHint(t *testing.T) {
	l := NewLimiter(clientOf(t, deadAddr(t)), "nohint", slow, 2, WithFallback(resilience.Off, 0))
	_, err := LimiterPolicy[int](l).Do(ctxFor(t), func(context.Context) (int, error) { return 0, nil })
	var re *resilience.RefusedError
	if !errors.As(err, &re) || !errors.Is(err, ratelimit.ErrLimited) || re.RetryAfter() >= 0 {
		t.Errorf("the closed fallback's refusal: %v; want a refusal with no RetryAfter hint (negative)", err)
	}
}
