package cache_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/cache"
)

// hookCtx runs hook the first time Err is called: the point where a call
// that found no entry is about to start a load.
type hookCtx struct {
	context.Context
	hook func()
	once atomic.Bool
}

func (c *hookCtx) Err() error {
	if c.once.CompareAndSwap(false, true) {
		c.hook()
	}
	return c.Context.Err()
}

// A call that found no entry, but finds one stored by a load that ended
// just before it would start its own, is a hit: the dependency is not
// called again.
func TestValueStoredJustBeforeALoadIsAHit(t *testing.T) {
	c := cache.New[string](time.Minute)
	var calls atomic.Int64
	get := cache.Guard(c, func(k string) string { return k }, func(_ context.Context, k string) (string, error) {
		calls.Add(1)
		return "v", nil
	})
	base, info := cache.WithInfo(context.Background())
	ctx := &hookCtx{Context: base, hook: func() {
		if v, err := get(context.Background(), "k"); v != "v" || err != nil {
			t.Errorf("the other call got (%q, %v)", v, err)
		}
	}}
	v, err := get(ctx, "k")
	if v != "v" || err != nil {
		t.Fatalf("got (%q, %v), want v", v, err)
	}
	if diff := cmp.Diff(cache.Info{Outcome: cache.Hit}, *info); diff != "" {
		t.Fatalf("Info mismatch (-want +got):\n%s", diff)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d loads, want 1 (the other call's)", n)
	}
	if s := c.Stats(); s.Hits != 1 || s.Misses != 1 {
		t.Fatalf("stats %+v: want 1 hit, 1 miss", s)
	}
}

// A guarded call with a context already done starts no load and gets the
// context's error.
func TestGuardDoneContextStartsNoLoad(t *testing.T) {
	c := cache.New[string](time.Minute)
	var calls atomic.Int64
	get := cache.Guard(c, func(k string) string { return k }, func(context.Context, string) (string, error) {
		calls.Add(1)
		return "v", nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if v, err := get(ctx, "k"); v != "" || !errors.Is(err, context.Canceled) || calls.Load() != 0 {
		t.Fatalf("got (%q, %v) after %d loads: want context.Canceled and no load", v, err, calls.Load())
	}
	if s := c.Stats(); s.Misses != 0 {
		t.Fatalf("stats %+v: want no miss", s)
	}
}
