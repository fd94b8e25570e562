package resilienceredis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
)

// aroundHook hands every script round trip of its client (EVALSHA, EVAL)
// to around, with next the client's own; unset, it passes them on.
type aroundHook struct {
	around *func(ctx context.Context, next func() error) error
}

func (h aroundHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h aroundHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); (n != "evalsha" && n != "eval") || *h.around == nil {
			return next(ctx, cmd)
		}
		err := (*h.around)(ctx, func() error { return next(ctx, cmd) })
		if err != nil {
			cmd.SetErr(err)
		}
		return err
	}
}
func (h aroundHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// errClient stands for an error of the client's own (a network timeout, a
// refused connection): not a reply of Redis, not the context's.
var errClient = errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: i/o timeout")

// The results of a CacheStore's round trips, on either kind of client
// (ContextTimeoutEnabled: on the caller's goroutine; without: on one of
// its own) and whichever bound comes first (the caller's deadline or
// the store's Timeout): an answer is used, even one that comes as the
// caller's context ends; a failure is reported (CacheStoreFailed) with the
// client's own error, not as "did not answer within the timeout"; a
// caller's context that ends during the round trip is not a failure of
// Redis, whatever error the client then gives.
func TestRemoteRunResults(t *testing.T) {
	want := entryAt(user{"Ada", 36}, time.Minute, 2*time.Minute)
	for _, inline := range []bool{true, false} {
		for _, callerFirst := range []bool{true, false} {
			name := map[bool]string{true: "ContextTimeoutEnabled", false: "goroutine"}[inline] +
				map[bool]string{true: "/caller's deadline first", false: "/Timeout first"}[callerFirst]
			t.Run(name, func(t *testing.T) {
				prefix := testPrefix(t)
				newUserStore(t, prefix).Set(ctxFor(t), "u1", want)
				var around func(ctx context.Context, next func() error) error
				rdb := clientWith(t, redistest.Addr(t), inline)
				rdb.AddHook(aroundHook{&around})
				var ev events
				// The caller's deadline is 30s (ctxFor): a Timeout of a
				// minute comes later.
				timeout := time.Minute
				if !callerFirst {
					timeout = 20 * time.Second
				}
				s := NewCacheStore[user](rdb, "users", nil, WithCachePrefix(prefix), WithCacheTimeout(timeout), WithCacheObserver(&ev))
				if s.r.inline != inline {
					t.Fatalf("inline = %v, want %v", s.r.inline, inline)
				}
				get := func(ctx context.Context) (bool, []error) {
					t.Helper()
					ev.mu.Lock()
					ev.got = nil
					ev.mu.Unlock()
					e, ok := s.Get(ctx, "u1")
					if ok {
						if diff := cmp.Diff(want, e, cmpEntry); diff != "" {
							t.Errorf("Get mismatch (-want +got):\n%s", diff)
						}
					}
					var errs []error
					for _, e := range ev.list() {
						errs = append(errs, e.Err)
					}
					return ok, errs
				}

				around = nil
				if ok, errs := get(ctxFor(t)); !ok || len(errs) != 0 {
					t.Errorf("answered: Get found %v, events %v; want true, none", ok, errs)
				}

				around = func(context.Context, func() error) error { return errClient }
				if ok, errs := get(ctxFor(t)); ok || len(errs) != 1 || errString(errs[0]) != errClient.Error() {
					t.Errorf("the client failed: Get found %v, events %v; want false, one with Err %q", ok, errs, errClient)
				}

				ctx, cancel := context.WithCancel(ctxFor(t))
				around = func(_ context.Context, next func() error) error { cancel(); return errClient }
				if ok, errs := get(ctx); ok || len(errs) != 0 {
					t.Errorf("the caller's context ended, the client failed: Get found %v, events %v; want false, none", ok, errs)
				}

				if inline {
					// On the caller's goroutine the answer is in before
					// the caller looks at its context. (On a goroutine of
					// its own, the caller sees the answer or the end of
					// its context, whichever it sees first.)
					ctx, cancel := context.WithCancel(ctxFor(t))
					around = func(_ context.Context, next func() error) error {
						err := next()
						if err == nil {
							cancel()
						}
						return err
					}
					if ok, errs := get(ctx); !ok || len(errs) != 0 {
						t.Errorf("answered as the caller's context ended: Get found %v, events %v; want true, none", ok, errs)
					}
				}
			})
		}
	}
}
