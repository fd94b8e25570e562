package resilienceredis

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/eventlog"
	"github.com/redis/go-redis/v9"
)

// scriptHook stands between a client and Redis for the scripts' round
// trips (EVALSHA, EVAL): reply, if set, replaces Redis's answer; fail, if
// set, runs instead of the round trip and gives its error.
type scriptHook struct {
	reply any
	fail  func(ctx context.Context) error
}

func (h scriptHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h scriptHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); n != "evalsha" && n != "eval" {
			return next(ctx, cmd)
		}
		if h.fail != nil {
			err := h.fail(ctx)
			cmd.SetErr(err)
			return err
		}
		err := next(ctx, cmd)
		if c, ok := cmd.(*redis.Cmd); ok && err == nil && h.reply != nil {
			c.SetVal(h.reply)
		}
		return err
	}
}
func (h scriptHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A reply that is not of the scripts' shape (a script of another version
// under the same SHA, a proxy that mangles replies) is an answer that
// asking again will not mend: the fallback decides, and the LimiterLocal
// event's Err matches ErrUnusable.
func TestLimiterMalformedReplyIsUnusable(t *testing.T) {
	ctx := ctxFor(t)
	for name, decide := range map[string]func(l *Limiter) bool{
		"Allow":       func(l *Limiter) bool { return l.Allow(ctx) },
		"AllowAtMost": func(l *Limiter) bool { n, _ := l.AllowAtMost(ctx, 1); return n == 1 },
	} {
		t.Run(name, func(t *testing.T) {
			rdb := newClient(t)
			rdb.AddHook(scriptHook{reply: []any{int64(1)}})
			var rec eventlog.Recorder
			l := NewLimiter(rdb, "mangled", slow, 1, WithPrefix(testPrefix(t)), WithObserver(&rec), WithFallback(resilience.Off, 0))
			if decide(l) {
				t.Errorf("%s admitted; want the fallback's refusal (it fails closed)", name)
			}
			ev := ofType(&rec, LimiterLocal)
			if len(ev) != 1 || !errors.Is(ev[0].Err, ErrUnusable) {
				t.Errorf("%s events %v; want one whose Err matches ErrUnusable", LimiterLocal, ev)
			}
		})
	}
}

// A caller's context that ends during the round trip makes the decision
// return ctx.Err() with nothing taken, and no fallback decides: not a
// failure of Redis.
func TestLimiterContextEndsDuringRoundTrip(t *testing.T) {
	for name, decide := range map[string]func(ctx context.Context, l *Limiter) (int, error){
		"AllowAtMost": func(ctx context.Context, l *Limiter) (int, error) { return l.AllowAtMost(ctx, 2) },
		"Allow": func(ctx context.Context, l *Limiter) (int, error) {
			if l.Allow(ctx) {
				return 1, nil
			}
			return 0, ctx.Err()
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(ctxFor(t))
			rdb := newClient(t)
			rdb.AddHook(scriptHook{fail: func(context.Context) error { cancel(); return context.Canceled }})
			var rec eventlog.Recorder
			l := NewLimiter(rdb, "ends", slow, 5, WithPrefix(testPrefix(t)), WithObserver(&rec), WithFallback(math.Inf(1), 0))
			n, err := decide(ctx, l)
			if n != 0 || !errors.Is(err, context.Canceled) {
				t.Errorf("%s = %d, %v; want 0, context.Canceled", name, n, err)
			}
			if ev := ofType(&rec, LimiterLocal); len(ev) != 0 || l.Snapshot().State != StateShared {
				t.Errorf("%s events %v, state %s; want none, shared: the caller gave up, Redis did not fail", LimiterLocal, ev, l.Snapshot().State)
			}
		})
	}
}

// A reply whose wait is more than 2^63 ns gives a refusal whose
// RetryAfter saturates at the longest time.Duration instead of wrapping
// around. (No valid Rate makes such a wait: Validate keeps Burst·T within
// 2^52µs; a reply is read as untrusted all the same.)
func TestLimiterRetryAfterSaturates(t *testing.T) {
	ctx := ctxFor(t)
	rdb := newClient(t)
	rdb.AddHook(scriptHook{reply: []any{int64(0), math.MaxInt64/int64(time.Microsecond) + 1, int64(0)}}) // refused
	l := NewLimiter(rdb, "glacial", slow, 1, WithPrefix(testPrefix(t)))
	_, atMost := l.AllowAtMost(ctx, 1)
	_, allow := LimiterPolicy[int](l).Do(ctx, func(context.Context) (int, error) { return 0, nil })
	for name, err := range map[string]error{"AllowAtMost": atMost, "LimiterPolicy": allow} {
		var re *resilience.RefusedError
		if !errors.As(err, &re) || re.RetryAfter() != time.Duration(math.MaxInt64) {
			t.Errorf("%s: %v; want a refusal with RetryAfter %v", name, err, time.Duration(math.MaxInt64))
		}
	}
}

// The longest wait a time.Duration holds in whole microseconds is given
// as it is, not saturated: RetryAfter saturates only beyond it.
func TestLimiterRetryAfterLongestExactWait(t *testing.T) {
	ctx := ctxFor(t)
	const us = math.MaxInt64 / int64(time.Microsecond)
	want := time.Duration(us) * time.Microsecond
	for name, refuse := range map[string]func(l *Limiter) error{
		"AllowAtMost":   func(l *Limiter) error { _, err := l.AllowAtMost(ctx, 1); return err },
		"LimiterPolicy": func(l *Limiter) error { return l.take(ctx, 1) },
	} {
		t.Run(name, func(t *testing.T) {
			rdb := newClient(t)
			rdb.AddHook(scriptHook{reply: []any{int64(0), us, int64(0)}}) // refused, wait us µs
			l := NewLimiter(rdb, "longest", slow, 1, WithPrefix(testPrefix(t)))
			var re *resilience.RefusedError
			if err := refuse(l); !errors.As(err, &re) || re.RetryAfter() != want {
				t.Errorf("%s: %v; want a refusal with RetryAfter %v", name, err, want)
			}
		})
	}
}

// Check of an infinite Rate asks Redis nothing and returns nil; Check
// whose context ends during the round trip returns ctx.Err(); Check of a
// bucket holding a value the limiter cannot have written repairs it (a
// LimiterBucketRepaired event) and takes no token.
func TestLimiterCheckCases(t *testing.T) {
	t.Run("infinite rate", func(t *testing.T) {
		l := NewLimiter(clientOf(t, deadAddr(t)), "checkinf", math.Inf(1), 0)
		if err := l.Check(ctxFor(t)); err != nil {
			t.Errorf("Check() of an infinite rate = %v, want nil without asking Redis", err)
		}
	})
	t.Run("context ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctxFor(t))
		rdb := newClient(t)
		rdb.AddHook(scriptHook{fail: func(context.Context) error { cancel(); return errors.New("test: gone") }})
		l := NewLimiter(rdb, "checkctx", slow, 1, WithPrefix(testPrefix(t)))
		if err := l.Check(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Check() = %v, want context.Canceled", err)
		}
	})
	t.Run("repairs", func(t *testing.T) {
		ctx := ctxFor(t)
		rdb := newClient(t)
		var rec eventlog.Recorder
		l := NewLimiter(rdb, "checkbad", slow, 2, WithPrefix(testPrefix(t)), WithObserver(&rec))
		if err := rdb.Set(ctx, l.keys[0], "garbage", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := l.Check(ctx); err != nil {
			t.Errorf("Check() = %v, want nil", err)
		}
		if n := len(ofType(&rec, LimiterBucketRepaired)); n != 1 {
			t.Errorf("%d %s events, want 1", n, LimiterBucketRepaired)
		}
	})
}
