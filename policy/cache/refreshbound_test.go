package cache_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/cache"
)

// MaxEntries holds after refreshes replaced values: a replaced value
// leaves the store whole, and evictions count the entries held.
func TestMaxEntriesAfterRefreshes(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithMaxEntries(2), cache.WithStaleWhileRevalidate(time.Hour))
		p, dep := c.Policy(), &counter{}
		_, _, _ = get(t, p, dep.op, "a")
		synctest.Wait()
		clk.Advance(2 * time.Second)
		_, _, _ = get(t, p, dep.op, "a") // stale: refreshed
		synctest.Wait()
		for i, k := range []string{"b", "c", "d", "e", "f", "g"} {
			_, _, _ = get(t, p, dep.op, k)
			synctest.Wait()
			if s := c.Stats(); s.Entries > 2 || s.Evictions != uint64(i) {
				t.Fatalf("after %s: stats %+v: want at most 2 entries held, %d evicted", k, s, i)
			}
		}
	})
}

// Without MaxBytes, values of any size are kept: only MaxEntries bounds
// them.
func TestSizeWithoutMaxBytesBoundsNothing(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Minute, cache.WithSize(func(s string) int64 { return int64(len(s)) }))
		p := c.Policy()
		for _, k := range []string{"aa", "bb", "cc"} {
			wantDo(t, p, k, func(context.Context) (string, error) { return k, nil }, k, nil)
		}
		synctest.Wait()
		if diff := cmp.Diff(cache.Stats{Misses: 3, Entries: 3, Bytes: 6}, c.Stats()); diff != "" {
			t.Fatalf("stats mismatch (-want +got):\n%s", diff)
		}
	})
}
