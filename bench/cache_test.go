package bench

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/cachepolicy"
	"golang.org/x/sync/singleflight"

	"github.com/f0b5b96b/resilience/policy/cache"
)

// syncMapCache is the store failsafe-go's cache policy asks its user for:
// a map without expiry or bound, the least a peer needs to serve hits.
type syncMapCache struct{ m sync.Map }

func (c *syncMapCache) Get(key string) (int, bool) {
	v, ok := c.m.Load(key)
	if !ok {
		return 0, false
	}
	return v.(int), true
}

func (c *syncMapCache) Set(key string, v int) { c.m.Store(key, v) }

var errWrong = errors.New("bench: wrong value")

// BenchmarkCacheHit is a hit of one key: ours through a Policy with the key
// in the context and through Guard, failsafe-go's cache policy (no TTL, no
// bound: a sync.Map) with the key in the context.
func BenchmarkCacheHit(b *testing.B) {
	op := func(context.Context) (int, error) { return 1, nil }
	c := cache.New[int](time.Hour)
	p := c.Policy()
	ctx := cache.Key(context.Background(), "user:42")
	bench(b, "resilience-policy", func() error {
		if v, err := p.Do(ctx, op); err != nil || v != 1 {
			return errWrong
		}
		return nil
	})

	get := cache.Guard(cache.New[int](time.Hour), func(k string) string { return k },
		func(context.Context, string) (int, error) { return 1, nil })
	bg := context.Background()
	bench(b, "resilience-guard", func() error {
		if v, err := get(bg, "user:42"); err != nil || v != 1 {
			return errWrong
		}
		return nil
	})

	fs := failsafe.With[int](cachepolicy.New[int](&syncMapCache{}))
	fctx := cachepolicy.ContextWithCacheKey(context.Background(), "user:42")
	fsOp := func() (int, error) { return 1, nil }
	bench(b, "failsafe", func() error {
		if v, err := fs.WithContext(fctx).Get(fsOp); err != nil || v != 1 {
			return errWrong
		}
		return nil
	})
}

// BenchmarkCacheCoalescedMiss is a miss of one key by 16 callers at once:
// ours (one load, its waiters) against golang.org/x/sync/singleflight,
// which coalesces but stores nothing (each round forgets the key: ours is
// purged). failsafe-go's cache policy does not coalesce: 16 callers make
// 16 calls.
func BenchmarkCacheCoalescedMiss(b *testing.B) {
	const callers = 16
	round := func(b *testing.B, reset func(), call func() error) {
		var wg sync.WaitGroup
		b.ReportAllocs()
		for b.Loop() {
			reset()
			wg.Add(callers)
			for range callers {
				go func() {
					defer wg.Done()
					if err := call(); err != nil {
						b.Error(err)
					}
				}()
			}
			wg.Wait()
		}
	}
	b.Run("resilience", func(b *testing.B) {
		c := cache.New[int](time.Hour)
		get := cache.Guard(c, func(k string) string { return k }, func(context.Context, string) (int, error) { return 1, nil })
		ctx := context.Background()
		round(b, func() { c.Purge(ctx) }, func() error {
			if v, err := get(ctx, "k"); err != nil || v != 1 {
				return errWrong
			}
			return nil
		})
	})
	b.Run("x-sync-singleflight", func(b *testing.B) {
		var g singleflight.Group
		round(b, func() {}, func() error {
			v, err, _ := g.Do("k", func() (any, error) { return 1, nil })
			if err != nil || v.(int) != 1 {
				return errWrong
			}
			return nil
		})
	})
}
