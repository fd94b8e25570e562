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

// A value that replaces its key's older one (a refresh) replaces its size
// in Stats.Bytes and in the MaxBytes bound: the older one's is not counted.
func TestReplacedValueReplacesItsSize(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithStaleWhileRevalidate(time.Minute),
			cache.WithMaxBytes(10), cache.WithSize(func(s string) int64 { return int64(len(s)) }))
		p := c.Policy()
		n := 0
		op := func(context.Context) (string, error) { n++; return strings.Repeat("x", 5+n), nil } // 6, then 7 bytes
		_, _ = p.Do(cache.Key(context.Background(), "k"), op)
		synctest.Wait()
		clk.Advance(2 * time.Second)
		_, _ = p.Do(cache.Key(context.Background(), "k"), op) // stale: refreshes
		synctest.Wait()
		if diff := cmp.Diff(cache.Stats{Hits: 1, Misses: 1, Stale: 1, Refreshes: 1, Entries: 1, Bytes: 7}, c.Stats()); diff != "" {
			t.Fatalf("stats after a refresh mismatch (-want +got):\n%s", diff)
		}
	})
}
