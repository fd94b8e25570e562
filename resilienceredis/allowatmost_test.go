package resilienceredis

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/eventlog"
	"github.com/google/go-cmp/cmp"
)

// atMost is one AllowAtMost's answer, its error reduced to what it
// matches.
type atMost struct {
	N       int
	Limited bool
}

func askAtMost(ctx context.Context, l *Limiter, n int) atMost {
	k, err := l.AllowAtMost(ctx, n)
	return atMost{k, errors.Is(err, ratelimit.ErrLimited) && errors.Is(err, resilience.ErrRefused)}
}

// AllowAtMost takes what the bucket holds, at most n: 2 of a burst of 5,
// then 3 of 10 asked (more than the burst, where AllowN refuses), then 0
// with a refusal whose RetryAfter is the wait until the next token; n = 0
// takes nothing and is no refusal (as AllowN(ctx, 0) is true).
func TestLimiterAllowAtMost(t *testing.T) {
	ctx := ctxFor(t)
	l := NewLimiter(newClient(t), "atmost", slow, 5, WithPrefix(testPrefix(t)))
	got := []atMost{askAtMost(ctx, l, 0), askAtMost(ctx, l, 2), askAtMost(ctx, l, 10), askAtMost(ctx, l, 1)}
	want := []atMost{{0, false}, {2, false}, {3, false}, {0, true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AllowAtMost answers mismatch (-want +got):\n%s", diff)
	}
	_, err := l.AllowAtMost(ctx, 4)
	var re *resilience.RefusedError
	if !errors.As(err, &re) || re.RetryAfter() > 100*time.Second || re.RetryAfter() < 90*time.Second {
		t.Errorf("err = %v; want a refusal with RetryAfter about 100s (one token at 0.01/s)", err)
	}
	s := l.Snapshot()
	if s.Refused != 2 || values(t, s)["decisions_shared"] != 4 {
		t.Errorf("Snapshot = %+v; want 2 refused, 4 decisions shared (n = 0 asks nothing)", s)
	}
}

// A negative n is a bug of the caller: AllowAtMost panics as AllowN and
// WaitN do, with the same message, whatever the limiter (an infinite
// rate, which never asks Redis, too).
func TestLimiterAllowAtMostNegativePanics(t *testing.T) {
	ctx := ctxFor(t)
	for name, l := range map[string]*Limiter{
		"finite":   NewLimiter(newClient(t), "atmostneg", slow, 5, WithPrefix(testPrefix(t))),
		"infinite": NewLimiter(newClient(t), "atmostneginf", math.Inf(1), 0),
	} {
		for _, call := range []struct {
			name string
			f    func()
		}{
			{"AllowN", func() { l.AllowN(ctx, -3) }},
			{"WaitN", func() { l.WaitN(ctx, -3) }},
			{"AllowAtMost", func() { l.AllowAtMost(ctx, -3) }},
		} {
			got := func() (r any) {
				defer func() { r = recover() }()
				call.f()
				return nil
			}()
			if want := "resilienceredis: n must be >= 0, got -3"; got != want {
				t.Errorf("%s: %s(ctx, -3) panicked with %v, want %q", name, call.name, got, want)
			}
		}
	}
}

// A burst larger than n, taken by two instances at once in many calls of
// AllowAtMost: every token is taken once, exactly Burst in all (the script
// is atomic in Redis). The Timeout is long and the fallback refuses, so
// that a loaded machine's slow round trip does not hand the decision to a
// local bucket of its own burst.
func TestLimiterAllowAtMostIsAtomic(t *testing.T) {
	ctx := ctxFor(t)
	prefix := testPrefix(t)
	const burst = 100
	ls := []*Limiter{
		NewLimiter(newClient(t), "atmostrace", slow, burst, WithPrefix(prefix), WithTimeout(5*time.Second), WithFallback(resilience.Off, 0)),
		NewLimiter(newClient(t), "atmostrace", slow, burst, WithPrefix(prefix), WithTimeout(5*time.Second), WithFallback(resilience.Off, 0)),
	}
	var mu sync.Mutex
	total := 0
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 10 {
				k, _ := ls[i%2].AllowAtMost(ctx, 3)
				mu.Lock()
				total += k
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if total != burst {
		t.Errorf("%d tokens taken by 80 calls of AllowAtMost(3) on a burst of %d, want %d", total, burst, burst)
	}
}

// A done context takes nothing; an infinite rate takes n without asking.
func TestLimiterAllowAtMostContextAndInf(t *testing.T) {
	l := NewLimiter(newClient(t), "atmostctx", slow, 2, WithPrefix(testPrefix(t)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if k, err := l.AllowAtMost(ctx, 2); k != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("AllowAtMost(done ctx) = %d, %v; want 0, context.Canceled", k, err)
	}
	if k, err := l.AllowAtMost(ctxFor(t), 5); k != 2 || err != nil {
		t.Errorf("AllowAtMost after the done context = %d, %v; want the whole burst, 2", k, err)
	}
	inf := NewLimiter(clientOf(t, deadAddr(t)), "atmostinf", math.Inf(1), 0, WithFallback(resilience.Off, 0))
	if k, err := inf.AllowAtMost(ctxFor(t), 1000); k != 1000 || err != nil {
		t.Errorf("infinite rate: AllowAtMost(1000) = %d, %v; want 1000, nil", k, err)
	}
}

// With Redis unreachable the fallback decides, each decision a
// LimiterLocal event: a local bucket takes what it holds, at most n;
// open takes n; closed refuses. A KeyedLimiter's fallback is per key.
func TestLimiterAllowAtMostFallback(t *testing.T) {
	ctx := ctxFor(t)
	rdb := clientOf(t, deadAddr(t))
	tests := []struct {
		name string
		opts []LimiterOption
		want []atMost
	}{
		{"local bucket", nil, []atMost{{2, false}, {1, false}, {0, true}}},
		{"fail open", []LimiterOption{WithFallback(math.Inf(1), 0)}, []atMost{{2, false}, {5, false}, {5, false}}},
		{"fail closed", []LimiterOption{WithFallback(resilience.Off, 0)}, []atMost{{0, true}, {0, true}, {0, true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec eventlog.Recorder
			l := NewLimiter(rdb, "atmostdown", slow, 3, append(tt.opts, WithObserver(&rec))...)
			got := []atMost{askAtMost(ctx, l, 2), askAtMost(ctx, l, 5), askAtMost(ctx, l, 5)}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("AllowAtMost with Redis down mismatch (-want +got):\n%s", diff)
			}
			if n := len(ofType(&rec, LimiterLocal)); n != 3 {
				t.Errorf("%d %s events for 3 local decisions", n, LimiterLocal)
			}
			// The snapshot counts the three decisions as local, and the
			// refusals among them; a fallback's refusal gives no hint.
			refused := 0
			for _, a := range got {
				if a.Limited {
					refused++
				}
			}
			s := l.Snapshot()
			if diff := cmp.Diff(map[string]float64{"local": 1, "decisions_shared": 0, "decisions_local": 3}, values(t, s)); diff != "" || s.Refused != uint64(refused) {
				t.Errorf("Snapshot refused %d, want %d; values mismatch (-want +got):\n%s", s.Refused, refused, diff)
			}
			if refused > 0 {
				_, err := l.AllowAtMost(ctx, 5)
				var re *resilience.RefusedError
				if !errors.As(err, &re) || re.RetryAfter() >= 0 {
					t.Errorf("the fallback's refusal %v; want a *resilience.RefusedError with no RetryAfter hint (negative)", err)
				}
			}
		})
	}
	k := NewKeyedLimiter(rdb, "atmostdownkeyed", slow, 2)
	var got []int
	for _, key := range []string{"a", "a", "b"} {
		n, _ := k.AllowAtMost(ctx, key, 5)
		got = append(got, n)
	}
	if diff := cmp.Diff([]int{2, 0, 2}, got); diff != "" {
		t.Errorf("per-key fallback AllowAtMost mismatch (-want +got):\n%s", diff)
	}
}

// KeyedLimiter.AllowAtMost takes from the key's own bucket in Redis.
func TestKeyedLimiterAllowAtMost(t *testing.T) {
	ctx := ctxFor(t)
	k := NewKeyedLimiter(newClient(t), "atmostkeyed", slow, 3, WithPrefix(testPrefix(t)))
	var got []int
	for _, key := range []string{"a", "a", "b"} {
		n, _ := k.AllowAtMost(ctx, key, 2)
		got = append(got, n)
	}
	if diff := cmp.Diff([]int{2, 1, 2}, got); diff != "" {
		t.Errorf("AllowAtMost per key mismatch (-want +got):\n%s", diff)
	}
}

// A bucket holding a value the limiter cannot have written is repaired
// (set empty) by AllowAtMost as by Allow: nothing taken, a
// LimiterBucketRepaired event.
func TestLimiterAllowAtMostRepairs(t *testing.T) {
	ctx := ctxFor(t)
	rdb := newClient(t)
	var rec eventlog.Recorder
	l := NewLimiter(rdb, "atmostbad", slow, 3, WithPrefix(testPrefix(t)), WithObserver(&rec))
	if err := rdb.Set(ctx, l.keys[0], "garbage", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got := askAtMost(ctx, l, 3); got != (atMost{0, true}) {
		t.Errorf("AllowAtMost on a bad bucket = %+v, want nothing taken, refused", got)
	}
	if n := len(ofType(&rec, LimiterBucketRepaired)); n != 1 {
		t.Errorf("%d %s events, want 1", n, LimiterBucketRepaired)
	}
}
