package bench

import (
	"context"
	"errors"
	"fmt"
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

// expiryMap is the least a cache with a TTL needs: a sync.Map of key to
// value and expiry time, the expiry checked on each Load (time.Now per
// hit), a miss loaded by its caller (no coalescing, no bound, no stale
// values). It is the peer of the hit rows: the cost of a lookup without
// a lock, which ours must beat.
type expiryMap struct {
	m   sync.Map // string → *expiring
	ttl time.Duration
}

type expiring struct {
	v       int
	expires time.Time
}

func (c *expiryMap) get(key string, load func() (int, error)) (int, error) {
	if e, ok := c.m.Load(key); ok {
		if e := e.(*expiring); time.Now().Before(e.expires) {
			return e.v, nil
		}
	}
	v, err := load()
	if err != nil {
		return 0, err
	}
	c.m.Store(key, &expiring{v: v, expires: time.Now().Add(c.ttl)})
	return v, nil
}

// BenchmarkCacheHit is a hit of one key: ours through a Policy with the key
// in the context and through Guard; a sync.Map with an expiry time per
// entry (expiryMap); failsafe-go's cache policy (no TTL, no bound: a
// sync.Map) with the key in the context.
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

	em := &expiryMap{ttl: time.Hour}
	load := func() (int, error) { return 1, nil }
	bench(b, "syncmap-expiry", func() error {
		if v, err := em.get("user:42", load); err != nil || v != 1 {
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

// BenchmarkCacheHitPaired is BenchmarkCacheHit's rows of ours and of
// expiryMap, made in turns (see paired): ours / expiryMap, serial and
// with GOMAXPROCS goroutines on the one key.
func BenchmarkCacheHitPaired(b *testing.B) {
	p := cache.New[int](time.Hour).Policy()
	op := func(context.Context) (int, error) { return 1, nil }
	ctx := cache.Key(context.Background(), "user:42")
	get := cache.Guard(cache.New[int](time.Hour), func(k string) string { return k },
		func(context.Context, string) (int, error) { return 1, nil })
	bg := context.Background()
	em := &expiryMap{ttl: time.Hour}
	load := func() (int, error) { return 1, nil }
	check := func(v int, err error) error {
		if err != nil || v != 1 {
			return errWrong
		}
		return nil
	}
	peer := kind{"syncmap-expiry", func() error { return check(em.get("user:42", load)) }}
	for _, parallel := range []bool{false, true} {
		mode := "serial"
		if parallel {
			mode = "parallel"
		}
		b.Run("policy/"+mode, func(b *testing.B) {
			paired(b, parallel, pairedSpan, []kind{{"resilience", func() error { return check(p.Do(ctx, op)) }}, peer})
		})
		b.Run("guard/"+mode, func(b *testing.B) {
			paired(b, parallel, pairedSpan, []kind{{"resilience", func() error { return check(get(bg, "user:42")) }}, peer})
		})
	}
}

// BenchmarkCacheCoalescedMiss is a miss of one key by 1 and by 16 callers
// at once, each in a goroutine the benchmark starts (one allocation
// each): ours (one load, the others wait for it) against
// golang.org/x/sync/singleflight, which coalesces but stores nothing
// (each round forgets the key: ours is purged), and failsafe-go's cache
// policy on a sync.Map, which does not coalesce: 16 callers make 16 calls
// (its map is cleared each round). The cost of a waiter is the difference
// between the two rows of a library, over 15.
func BenchmarkCacheCoalescedMiss(b *testing.B) {
	round := func(b *testing.B, callers int, reset func(), call func() error) {
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
	for _, callers := range []int{1, 16} {
		b.Run(fmt.Sprintf("resilience/callers=%d", callers), func(b *testing.B) {
			c := cache.New[int](time.Hour)
			get := cache.Guard(c, func(k string) string { return k }, func(context.Context, string) (int, error) { return 1, nil })
			ctx := context.Background()
			round(b, callers, func() { c.Purge(ctx) }, func() error {
				if v, err := get(ctx, "k"); err != nil || v != 1 {
					return errWrong
				}
				return nil
			})
		})
		b.Run(fmt.Sprintf("x-sync-singleflight/callers=%d", callers), func(b *testing.B) {
			var g singleflight.Group
			round(b, callers, func() {}, func() error {
				v, err, _ := g.Do("k", func() (any, error) { return 1, nil })
				if err != nil || v.(int) != 1 {
					return errWrong
				}
				return nil
			})
		})
		b.Run(fmt.Sprintf("failsafe/callers=%d", callers), func(b *testing.B) {
			store := &syncMapCache{}
			fs := failsafe.With[int](cachepolicy.New[int](store))
			fctx := cachepolicy.ContextWithCacheKey(context.Background(), "k")
			fsOp := func() (int, error) { return 1, nil }
			round(b, callers, func() { store.m.Clear() }, func() error {
				if v, err := fs.WithContext(fctx).Get(fsOp); err != nil || v != 1 {
					return errWrong
				}
				return nil
			})
		})
	}
}
