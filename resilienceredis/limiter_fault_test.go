package resilienceredis

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/eventlog"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/f0b5b96b/resilience/telemetry"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
)

// ofType returns the events of r of type typ.
func ofType(r *eventlog.Recorder, typ telemetry.Type) []telemetry.Event {
	var out []telemetry.Event
	for _, e := range r.All() {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// checked waits until the background check of the server that a limiter's
// first decision started has recorded the settings under setKey: its
// warnings, if any, have been given to the Observer by then.
func checked(t *testing.T, rdb *redis.Client, setKey string) {
	t.Helper()
	redistest.Eventually(t, 5*time.Second, "the background check records the settings", func() (bool, string) {
		n, err := rdb.Exists(context.Background(), setKey).Result()
		return err == nil && n == 1, "EXISTS " + setKey + " = " + strconv.FormatInt(n, 10)
	})
}

// Eviction: a server with maxmemory set and a policy other than
// noeviction may evict bucket keys (each carries a TTL, so the volatile
// policies take them too): Check says so and the Observer is told, by
// Check and by the check the first decision starts; noeviction, or no
// maxmemory, is safe: no warning.
func TestLimiterEvictionPolicyWarning(t *testing.T) {
	tests := []struct {
		policy, maxmemory string
		unsafe            bool
	}{
		{"noeviction", "64mb", false},
		{"allkeys-lru", "0", false}, // no limit: nothing is evicted
		{"allkeys-lru", "64mb", true},
		{"allkeys-random", "64mb", true},
		{"volatile-lru", "64mb", true},
		{"volatile-ttl", "64mb", true},
	}
	for _, tt := range tests {
		t.Run(tt.policy+"/maxmemory="+tt.maxmemory, func(t *testing.T) {
			s := redistest.Start(t, "--maxmemory", tt.maxmemory, "--maxmemory-policy", tt.policy)
			rdb := clientOf(t, s.Addr)
			ctx := ctxFor(t)

			// The check the first decision starts, in the background.
			var bg eventlog.Recorder
			l := NewLimiter(rdb, "evict", slow, 5, WithObserver(&bg), WithTimeout(5*time.Second)) // a slow round trip would start no check
			if !l.Allow(ctx) {
				t.Fatal("the first Allow was refused")
			}
			checked(t, rdb, "resilience:rl:{evict}:settings")
			if got := len(ofType(&bg, LimiterEvictionUnsafe)); got != b2i(tt.unsafe) {
				t.Errorf("%d %s events from the background check, want %d", got, LimiterEvictionUnsafe, b2i(tt.unsafe))
			}

			// Check.
			var rec eventlog.Recorder
			err := NewLimiter(rdb, "evict", slow, 5, WithObserver(&rec), WithTimeout(5*time.Second)).Check(ctx)
			if got := errors.Is(err, ErrEvictionPolicy); got != tt.unsafe {
				t.Fatalf("Check() = %v; matches ErrEvictionPolicy: %v, want %v", err, got, tt.unsafe)
			}
			if tt.unsafe {
				if !strings.Contains(err.Error(), tt.policy) {
					t.Errorf("Check() = %q, want the policy named", err)
				}
				want := []telemetry.Event{{Type: LimiterEvictionUnsafe, Name: "evict", Err: err}}
				if diff := cmp.Diff(want, rec.All(), cmp.Comparer(sameErr)); diff != "" {
					t.Errorf("events of Check mismatch (-want +got):\n%s", diff)
				}
			} else if err != nil || len(rec.All()) != 0 {
				t.Errorf("Check() = %v, events %v; want nil, none", err, rec.All())
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sameErr compares errors by message (a joined error holds the one the
// event carries).
func sameErr(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return strings.Contains(a.Error(), b.Error()) || strings.Contains(b.Error(), a.Error())
}

// aclServer starts a private server with the ACL user "limited" (password
// "pw") made by rules, and returns a client of the default user and one of
// limited.
func aclServer(t *testing.T, rules ...string) (admin, limited *redis.Client, s *redistest.Server) {
	t.Helper()
	s = redistest.Start(t)
	admin = clientOf(t, s.Addr)
	args := []any{"ACL", "SETUSER", "limited", "on", ">pw"}
	for _, r := range rules {
		args = append(args, r)
	}
	if err := admin.Do(ctxFor(t), args...).Err(); err != nil {
		t.Fatal(err)
	}
	limited = redis.NewClient(&redis.Options{Addr: s.Addr, Username: "limited", Password: "pw", MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
	t.Cleanup(func() { limited.Close() })
	return admin, limited, s
}

// A user that may not run the scripts (ACL -eval -evalsha): Check says so
// (ErrUnusable, NOPERM), and each decision, which the fallback makes, is
// reported with that reason; Wait too. Before, the fleet silently admitted
// N times its limit.
func TestLimiterACLDenied(t *testing.T) {
	_, limited, _ := aclServer(t, "~*", "+@all", "-eval", "-evalsha")
	ctx := ctxFor(t)
	var rec eventlog.Recorder
	l := NewLimiter(limited, "acl", slow, 2, WithObserver(&rec))
	err := l.Check(ctx)
	if !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("Check() = %v, want ErrUnusable with the server's NOPERM", err)
	}
	// The fallback decides: a local bucket of the same rate and burst.
	var got []bool
	for range 4 {
		got = append(got, l.Allow(ctx))
	}
	if diff := cmp.Diff([]bool{true, true, false, false}, got); diff != "" {
		t.Errorf("decisions mismatch (-want +got):\n%s", diff)
	}
	if err := l.Wait(ctx); !errors.Is(err, ratelimit.ErrLimited) && !errors.Is(err, context.DeadlineExceeded) {
		// The local bucket is empty for 100s: the wait exceeds ctx's 30s.
		t.Errorf("Wait through the fallback: %v, want a refusal", err)
	}
	local := ofType(&rec, LimiterLocal)
	if len(local) != 5 {
		t.Fatalf("%d %s events for 5 decisions: %v", len(local), LimiterLocal, rec.All())
	}
	for i, e := range local {
		if e.Name != "acl" || !errors.Is(e.Err, ErrUnusable) || !strings.Contains(e.Err.Error(), "NOPERM") {
			t.Errorf("event %d = %+v, want Name acl and the NOPERM reason", i, e)
		}
	}
}

// A key of the limiter that holds another type (WRONGTYPE), and a server
// without scripting (EVALSHA and EVAL renamed away: unknown command), are
// permanent errors too; a user who may run the scripts but not CONFIG GET
// has a working limiter whose eviction policy is not checked.
func TestLimiterPermanentErrors(t *testing.T) {
	ctx := ctxFor(t)
	t.Run("WRONGTYPE", func(t *testing.T) {
		rdb := newClient(t)
		prefix := testPrefix(t)
		var rec eventlog.Recorder
		k := NewKeyedLimiter(rdb, "wt", slow, 1, WithPrefix(prefix), WithObserver(&rec))
		if err := rdb.HSet(ctx, prefix+"rl:wt:0.01/1:{tenant}", "f", "v").Err(); err != nil {
			t.Fatal(err)
		}
		err := k.Limiter("tenant").Check(ctx)
		if !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Fatalf("Check() = %v, want ErrUnusable with WRONGTYPE", err)
		}
		if !k.Allow(ctx, "tenant") {
			t.Error("the fallback's first decision refused")
		}
		local := ofType(&rec, LimiterLocal)
		if len(local) != 1 || local[0].Key != "tenant" || !errors.Is(local[0].Err, ErrUnusable) {
			t.Errorf("events = %+v, want one %s of key tenant, matching ErrUnusable", rec.All(), LimiterLocal)
		}
	})
	t.Run("no scripting", func(t *testing.T) {
		s := redistest.Start(t, "--rename-command", "EVALSHA", "", "--rename-command", "EVAL", "")
		var rec eventlog.Recorder
		l := NewLimiter(clientOf(t, s.Addr), "noscript", slow, 1, WithObserver(&rec))
		if err := l.Check(ctx); !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), "unknown command") {
			t.Fatalf("Check() = %v, want ErrUnusable with unknown command", err)
		}
		l.Allow(ctx)
		if local := ofType(&rec, LimiterLocal); len(local) != 1 || !errors.Is(local[0].Err, ErrUnusable) {
			t.Errorf("events = %+v, want one %s matching ErrUnusable", rec.All(), LimiterLocal)
		}
	})
	t.Run("no CONFIG GET", func(t *testing.T) {
		admin, limited, _ := aclServer(t, "~*", "+@all", "-config")
		if err := admin.ConfigSet(ctx, "maxmemory", "64mb").Err(); err != nil {
			t.Fatal(err)
		}
		if err := admin.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err(); err != nil {
			t.Fatal(err)
		}
		var rec eventlog.Recorder
		l := NewLimiter(limited, "noconfig", slow, 1, WithObserver(&rec))
		if err := l.Check(ctx); err != nil {
			t.Errorf("Check() = %v, want nil: the policy cannot be read, the limiter works", err)
		}
		if !l.Allow(ctx) || l.Allow(ctx) || len(rec.All()) != 0 {
			t.Errorf("decisions not the fleet's, or events %v", rec.All())
		}
	})
}

// noeviction keeps every bucket; when memory is full the server refuses
// the scripts (OOM), a transient error: the fallback decides and says why.
func TestLimiterNoEvictionOutOfMemory(t *testing.T) {
	s := redistest.Start(t, "--maxmemory", "3mb", "--maxmemory-policy", "noeviction")
	rdb := clientOf(t, s.Addr)
	ctx := ctxFor(t)
	// Fill it with small keys (a big value's own buffer would be what
	// overflows, and is freed after), in pipelines of 100.
	filler := strings.Repeat("x", 100)
	full := false
	for i := 0; i < 1000 && !full; i++ { // at most 100000 keys, 10MB
		pipe := rdb.Pipeline()
		for j := range 100 {
			pipe.Set(ctx, "filler:"+strconv.Itoa(i*100+j), filler, 0)
		}
		_, err := pipe.Exec(ctx)
		full = err != nil && strings.HasPrefix(err.Error(), "OOM")
	}
	if !full {
		t.Fatal("the server never refused a write with OOM")
	}
	var rec eventlog.Recorder
	l := NewLimiter(rdb, "oom", slow, 1, WithObserver(&rec))
	if !l.Allow(ctx) {
		t.Error("the fallback (the same limit, locally) refused the first call")
	}
	local := ofType(&rec, LimiterLocal)
	if len(local) != 1 || !strings.HasPrefix(local[0].Err.Error(), "OOM") || errors.Is(local[0].Err, ErrUnusable) {
		t.Errorf("events = %+v, want one %s with the server's OOM, not ErrUnusable", rec.All(), LimiterLocal)
	}
}

// A network failure is not permanent: the reason reported does not match
// ErrUnusable.
func TestLimiterLocalReasonTransient(t *testing.T) {
	var rec eventlog.Recorder
	l := NewLimiter(clientOf(t, deadAddr(t)), "down", slow, 1, WithObserver(&rec))
	if err := l.Check(ctxFor(t)); err == nil || errors.Is(err, ErrUnusable) {
		t.Errorf("Check() with nothing listening = %v, want the client's error, not ErrUnusable", err)
	}
	l.Allow(ctxFor(t))
	l.Allow(ctxFor(t))
	local := ofType(&rec, LimiterLocal)
	if len(local) != 2 || local[0].Err == nil || errors.Is(local[0].Err, ErrUnusable) || local[1].Err != local[0].Err {
		t.Errorf("events = %+v, want two %s with the dial error", rec.All(), LimiterLocal)
	}
}

// Hostile values in the bucket's key: each is repaired to an empty bucket
// (TAT = now + Burst·T, with the matching TTL), reported, and the decision
// is a refusal whose RetryAfter is above 0 and at most Burst/Rate; before,
// inf and 1e300 gave RetryAfter 0 (a hot loop), NaN admitted everything,
// garbage failed the script.
func TestLimiterHostileBucketValues(t *testing.T) {
	ctx := ctxFor(t)
	rdb := newClient(t)
	values := []struct {
		v   string
		ttl time.Duration // 0: none
	}{
		{"inf", 0}, {"-inf", 0}, {"nan", 0}, {"1e300", 0}, {"1e300", time.Hour},
		{"-5", 0}, {"-5", time.Hour}, {"garbage", time.Hour}, {"", 0},
	}
	for _, v := range values {
		t.Run(v.v+"/ttl="+v.ttl.String(), func(t *testing.T) {
			prefix := testPrefix(t)
			var rec eventlog.Recorder
			l := NewLimiter(rdb, "hostile", 10, 5, WithPrefix(prefix), WithObserver(&rec)) // T 100ms, Burst·T 500ms
			key := prefix + "rl:{hostile}:10/5"
			if err := rdb.Set(ctx, key, v.v, v.ttl).Err(); err != nil {
				t.Fatal(err)
			}
			_, err := LimiterPolicy[int](l).Do(ctx, func(context.Context) (int, error) { return 0, nil })
			var re *resilience.RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("a call on the value %q: %v, want a refusal (the bucket set empty)", v.v, err)
			}
			if d := re.RetryAfter(); d <= 0 || d > 500*time.Millisecond {
				t.Errorf("RetryAfter() = %v, want in (0, Burst/Rate = 500ms]", d)
			}
			want := []telemetry.Event{{Type: LimiterBucketRepaired, Name: "hostile", Err: ErrBadBucket}}
			if diff := cmp.Diff(want, ofType(&rec, LimiterBucketRepaired), cmp.Comparer(sameErr)); diff != "" {
				t.Errorf("events mismatch (-want +got):\n%s", diff)
			}
			if local := ofType(&rec, LimiterLocal); len(local) != 0 {
				t.Errorf("decided locally: %v", local)
			}
			tat, err := rdb.Get(ctx, key).Float64()
			pttl, _ := rdb.PTTL(ctx, key).Result()
			tm, _ := rdb.Time(ctx).Result()
			server := float64(tm.Sub(time.Unix(1704067200, 0)).Microseconds())
			if err != nil || math.IsNaN(tat) || tat-server <= 0 || tat-server > 500_000 || pttl <= 0 || pttl > 500*time.Millisecond {
				t.Errorf("after the call the key holds %v (%v), TAT - now %vµs, PTTL %v; want a TAT within 500ms and its TTL", tat, err, tat-server, pttl)
			}
			// The bucket counts on from there: the next token comes within
			// 100ms, and a Wait gets it.
			if err := l.Wait(ctx); err != nil {
				t.Errorf("Wait after the repair: %v", err)
			}
		})
	}
}

// A valid bucket is not repaired: a Wait's reservation far ahead (its TTL
// matching) stays, and the refusal's RetryAfter is the wait behind it.
func TestLimiterLongReservationIsNotRepaired(t *testing.T) {
	ctx := ctxFor(t)
	rdb := newClient(t)
	prefix := testPrefix(t)
	var rec eventlog.Recorder
	l := NewLimiter(rdb, "long", 1, 1, WithPrefix(prefix), WithObserver(&rec)) // T 1s
	l.Allow(ctx)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 3)
	for range 3 {
		go func() { done <- l.Wait(wctx) }() // reserve 1s, 2s, 3s ahead
	}
	redistest.Eventually(t, 5*time.Second, "three Waits reserve", func() (bool, string) {
		pttl, _ := rdb.PTTL(ctx, prefix+"rl:{long}:1/1").Result()
		return pttl > 3500*time.Millisecond, "PTTL " + pttl.String()
	})
	_, err := LimiterPolicy[int](l).Do(ctx, func(context.Context) (int, error) { return 0, nil })
	var re *resilience.RefusedError
	if !errors.As(err, &re) || re.RetryAfter() < 3*time.Second || re.RetryAfter() > 4*time.Second {
		t.Errorf("a call behind three reservations: %v, want a refusal with RetryAfter in [3s, 4s]", err)
	}
	if got := ofType(&rec, LimiterBucketRepaired); len(got) != 0 {
		t.Errorf("a valid bucket was repaired: %v", got)
	}
	cancel()
	for range 3 {
		<-done
	}
}

// Same name, different settings: each setting has a bucket of its own (the
// settings are in the key), so an instance set to 1000/s is not held to
// another's 1/s during a rolling change; Check and the background check
// report the conflict. Instances of the same settings share one bucket and
// hear of no conflict.
func TestLimiterSettingsConflict(t *testing.T) {
	ctx := ctxFor(t)
	prefix := testPrefix(t)
	var slowRec, fastRec eventlog.Recorder
	slowL := NewLimiter(newClient(t), "api", 1, 1, WithPrefix(prefix), WithObserver(&slowRec))
	fastL := NewLimiter(newClient(t), "api", 1000, 20, WithPrefix(prefix), WithObserver(&fastRec))
	if !slowL.Allow(ctx) || slowL.Allow(ctx) {
		t.Fatal("the 1/s instance: want true then false")
	}
	admitted := 0
	for range 20 {
		if fastL.Allow(ctx) {
			admitted++
		}
	}
	if admitted != 20 {
		t.Errorf("the 1000/s, burst 20 instance admitted %d of 20 calls at once, want 20", admitted)
	}
	// Its bucket, whose key lives a millisecond per token taken, is valid
	// throughout (a TTL of 0ms left is not a missing one).
	if got := ofType(&fastRec, LimiterBucketRepaired); len(got) != 0 {
		t.Errorf("a valid bucket was repaired: %v", got)
	}
	err := fastL.Check(ctx)
	if !errors.Is(err, ErrSettingsConflict) || !strings.Contains(err.Error(), `"1/1"`) {
		t.Errorf("Check() of the 1000/s instance = %v, want ErrSettingsConflict naming 1/1", err)
	}
	// The slow instance's background check ran before the fast one
	// recorded its settings; the fast one's ran after: it warns.
	redistest.Eventually(t, 5*time.Second, "the fast instance's check warns", func() (bool, string) {
		return len(ofType(&fastRec, LimiterSettingsConflict)) >= 1, "no warning yet"
	})
	if err := slowL.Check(ctx); !errors.Is(err, ErrSettingsConflict) || !strings.Contains(err.Error(), `"1000/20"`) {
		t.Errorf("Check() of the 1/s instance = %v, want ErrSettingsConflict naming 1000/20", err)
	}

	same := testPrefix(t)
	a := NewLimiter(newClient(t), "api", 5, 2, WithPrefix(same))
	b := NewLimiter(newClient(t), "api", 5, 2, WithPrefix(same))
	if err := a.Check(ctx); err != nil {
		t.Errorf("Check() = %v, want nil", err)
	}
	if err := b.Check(ctx); err != nil {
		t.Errorf("Check() of a second instance of the same settings = %v, want nil", err)
	}
	if !a.Allow(ctx) || !b.Allow(ctx) || a.Allow(ctx) || b.Allow(ctx) {
		t.Error("two instances of the same settings do not share their bucket of 2")
	}
}

// A cancelled Wait gives back only its own tokens, and only while nobody
// reserved behind it: here A reserves, B reserves behind A, A is
// cancelled (its tokens stay spent: giving them back would hand B's place
// to others), then B is cancelled (B's own tokens come back; A's do not).
func TestLimiterCancelledWaitRefundsOnlyItsOwn(t *testing.T) {
	ctx := ctxFor(t)
	rdb := newClient(t)
	prefix := testPrefix(t)
	l := NewLimiter(rdb, "own", 1, 1, WithPrefix(prefix)) // T = 1s
	key := prefix + "rl:{own}:1/1"
	if !l.Allow(ctx) {
		t.Fatal("first Allow refused")
	}
	tatOf := func() float64 {
		v, err := rdb.Get(ctx, key).Float64()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	start := tatOf()
	wait := func(c context.Context, prev float64) (float64, chan error) {
		done := make(chan error, 1)
		go func() { done <- l.Wait(c) }()
		var now float64
		redistest.Eventually(t, 5*time.Second, "the Wait reserves its token", func() (bool, string) {
			now = tatOf()
			return now > prev, "TAT " + strconv.FormatFloat(now, 'f', -1, 64)
		})
		return now, done
	}
	actx, cancelA := context.WithCancel(ctx)
	bctx, cancelB := context.WithCancel(ctx)
	defer cancelB()
	afterA, doneA := wait(actx, start)
	afterB, doneB := wait(bctx, afterA)
	if d := afterB - afterA; d != 1e6 || afterA-start != 1e6 {
		t.Fatalf("reservations of 1 token each moved the TAT by %v and %vµs, want 1e6", afterA-start, d)
	}
	cancelA()
	if err := <-doneA; !errors.Is(err, context.Canceled) {
		t.Fatalf("A: %v, want context.Canceled", err)
	}
	settled(l) // A's refund has run
	if got := tatOf(); got != afterB {
		t.Errorf("TAT after A's cancellation = %v, want %v (B's reservation kept, A's tokens spent)", got, afterB)
	}
	cancelB()
	if err := <-doneB; !errors.Is(err, context.Canceled) {
		t.Fatalf("B: %v, want context.Canceled", err)
	}
	settled(l)
	if got := tatOf(); got != afterA {
		t.Errorf("TAT after B's cancellation = %v, want %v (B's own token back, not A's)", got, afterA)
	}
}

// When the limiter's own Timeout ends a round trip on a stalled server,
// the reason is the library's timeout error (wrapping the client's) with
// either client setting: never a bare "context deadline exceeded", which
// reads as the caller's deadline. The breaker says the same.
func TestLocalReasonOnTimeout(t *testing.T) {
	want := "resilienceredis: Redis did not answer within the timeout"
	for _, ctxTimeouts := range []bool{false, true} {
		t.Run("ContextTimeoutEnabled="+strconv.FormatBool(ctxTimeouts), func(t *testing.T) {
			s := redistest.Start(t)
			rdb := stallClient(t, s.Addr, ctxTimeouts)
			var rec eventlog.Recorder
			ctx := ctxFor(t) // no deadline within the Timeout: the Timeout ends the round trips
			const timeout = 200 * time.Millisecond
			l := NewLimiter(rdb, "slowreason", slow, 1, WithPrefix(testPrefix(t)), WithTimeout(timeout), WithProbeInterval(time.Millisecond), WithObserver(&rec))
			defer l.Close()
			b := newBreaker(rdb, "slowreason", faultOpts(WithPrefix(testPrefix(t)), WithTimeout(timeout)))
			defer b.Close()
			b.sync()
			if !l.Allow(ctx) {
				t.Fatal("with the server up: refused")
			}
			s.Pause(t)
			defer s.Resume(t)
			for range 3 {
				l.Allow(ctx)
				time.Sleep(2 * time.Millisecond) // past ProbeInterval: the next decision asks Redis again
			}
			var got []string
			for _, e := range ofType(&rec, LimiterLocal) {
				if !errors.Is(e.Err, errSlow) {
					t.Errorf("LimiterLocal Err %v does not match errSlow", e.Err)
				}
				got = append(got, errString(e.Err))
			}
			if diff := cmp.Diff([]string{want, want, want}, got); diff != "" {
				t.Errorf("LimiterLocal reasons mismatch (-want +got):\n%s", diff)
			}
			if r := l.Snapshot().Reason; r != want {
				t.Errorf("limiter Snapshot Reason %q, want %q", r, want)
			}
			b.sync()
			if r := b.Snapshot().Reason; r != want {
				t.Errorf("breaker Snapshot Reason %q, want %q", r, want)
			}
		})
	}
}

// A KeyedLimiter records its settings under its name as a Limiter does,
// in one sorted set for all its keys: Check finds nothing while one
// setting is in use, and reports another KeyedLimiter of the name with
// other settings.
func TestKeyedLimiterSettingsConflict(t *testing.T) {
	ctx := ctxFor(t)
	rdb := newClient(t)
	prefix := testPrefix(t)
	a := NewKeyedLimiter(rdb, "tenants", 5, 2, WithPrefix(prefix))
	if err := a.Check(ctx); err != nil {
		t.Fatalf("Check() with one setting in use = %v, want nil", err)
	}
	if n, err := rdb.Exists(ctx, prefix+"rl:tenants:settings").Result(); err != nil || n != 1 {
		t.Errorf("EXISTS of the settings in use = %d, %v; want 1", n, err)
	}
	b := NewKeyedLimiter(newClient(t), "tenants", 7, 2, WithPrefix(prefix))
	if err := b.Check(ctx); !errors.Is(err, ErrSettingsConflict) || !strings.Contains(err.Error(), `"5/2"`) {
		t.Errorf("Check() of the 7/s KeyedLimiter = %v, want ErrSettingsConflict naming 5/2", err)
	}
}
