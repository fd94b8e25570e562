package cache_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/cache"
)

// Guard panics at once, naming the argument, if the cache or key is nil.
func TestGuardNilArgumentsPanic(t *testing.T) {
	c := cache.New[string](time.Minute)
	key := func(k string) string { return k }
	fn := func(context.Context, string) (string, error) { return "", nil }
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"cache", func() { cache.Guard(nil, key, fn) }, "cache: Guard cache must not be nil"},
		{"key", func() { cache.Guard(c, nil, fn) }, "cache: Guard key must not be nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r, _ := recover().(string); !strings.HasPrefix(r, tc.want) {
					t.Fatalf("panic %q, want %q", r, tc.want)
				}
			}()
			tc.f()
		})
	}
}

// A guarded call of an empty key bypasses the cache and says so in its
// Info, overwriting what an earlier call left there.
func TestGuardEmptyKeyRecordsBypassed(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Minute)
		get := cache.Guard(c, func(k string) string { return k }, func(_ context.Context, k string) (string, error) { return "v" + k, nil })
		ctx, info := cache.WithInfo(context.Background())
		if v, err := get(ctx, "a"); v != "va" || err != nil {
			t.Fatalf("got (%q, %v)", v, err)
		}
		synctest.Wait()
		if v, _ := get(ctx, "a"); v != "va" || info.Outcome != cache.Hit {
			t.Fatalf("second call: %q, %v; want a hit", v, info.Outcome)
		}
		if v, _ := get(ctx, ""); v != "v" {
			t.Fatalf("empty key: got %q, want v", v)
		}
		if diff := cmp.Diff(cache.Info{Outcome: cache.Bypassed}, *info); diff != "" {
			t.Fatalf("Info of a bypassed call mismatch (-want +got):\n%s", diff)
		}
	})
}

// A guarded call that finds a value within StaleWhileRevalidate gets it at
// once and starts one refresh with the call's own argument.
func TestGuardStaleWhileRevalidate(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithStaleWhileRevalidate(time.Minute))
		n := 0
		get := cache.Guard(c, func(k string) string { return k }, func(_ context.Context, k string) (string, error) {
			n++
			return k + string(rune('0'+n)), nil
		})
		if v, _ := get(context.Background(), "k"); v != "k1" {
			t.Fatalf("first call %q, want k1", v)
		}
		synctest.Wait()
		clk.Advance(2 * time.Second)
		ctx, info := cache.WithInfo(context.Background())
		if v, _ := get(ctx, "k"); v != "k1" || !info.Stale || info.Outcome != cache.Hit {
			t.Fatalf("stale call: %q, %+v; want the stale k1, a stale hit", v, *info)
		}
		synctest.Wait()
		if v, _ := get(ctx, "k"); v != "k2" || info.Stale {
			t.Fatalf("after the refresh: %q, %+v; want the refreshed k2, fresh", v, *info)
		}
		if s := c.Stats(); s.Refreshes != 1 || s.Stale != 1 {
			t.Fatalf("stats %+v: want 1 refresh, 1 stale", s)
		}
	})
}
