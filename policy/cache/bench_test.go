package cache_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/cache"
)

func BenchmarkHit(b *testing.B) {
	c := cache.New[int](time.Hour)
	p := c.Policy()
	op := func(context.Context) (int, error) { return 1, nil }
	ctx := cache.Key(context.Background(), "user:42")
	if _, err := p.Do(ctx, op); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.Do(ctx, op)
	}
}

func BenchmarkHitGuard(b *testing.B) {
	c := cache.New[int](time.Hour)
	get := cache.Guard(c, func(k string) string { return k }, func(context.Context, string) (int, error) { return 1, nil })
	ctx := context.Background()
	_, _ = get(ctx, "user:42")
	b.ReportAllocs()
	for b.Loop() {
		_, _ = get(ctx, "user:42")
	}
}

func BenchmarkHitParallel(b *testing.B) {
	c := cache.New[int](time.Hour, cache.WithMaxEntries(4096))
	p := c.Policy()
	op := func(context.Context) (int, error) { return 1, nil }
	keys := make([]context.Context, 64)
	for i := range keys {
		keys[i] = cache.Key(context.Background(), "user:"+string(rune('A'+i)))
		_, _ = p.Do(keys[i], op)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			_, _ = p.Do(keys[i&63], op)
			i++
		}
	})
}

// BenchmarkCoalescedMiss measures a miss of one key by n callers at once:
// one load, n-1 waiters. B/op and allocs/op are per miss, the callers'
// goroutines included (one closure each); the difference between n=1 and
// n=16, over 15, is the cost of a waiter.
func BenchmarkCoalescedMiss(b *testing.B) {
	for _, n := range []int{1, 16} {
		b.Run(fmt.Sprintf("callers=%d", n), func(b *testing.B) {
			c := cache.New[int](time.Hour)
			get := cache.Guard(c, func(k string) string { return k }, func(ctx context.Context, k string) (int, error) { return 1, nil })
			ctx := context.Background()
			var wg sync.WaitGroup
			b.ReportAllocs()
			for b.Loop() {
				c.Purge(context.Background())
				wg.Add(n)
				for range n {
					go func() { _, _ = get(ctx, "k"); wg.Done() }()
				}
				wg.Wait()
			}
		})
	}
}
