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

// With a Store, Purge purges the Store; Stats count no entries or bytes
// (the Store holds them), and an entry past its Discard time is not used.
func TestStorePurgeAndStats(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		st := &mapStore{m: map[string]cache.Entry[string]{}}
		c := cache.New[string](time.Minute, cache.WithClock(clk), cache.WithStore[string](st),
			cache.WithSize(func(s string) int64 { return int64(len(s)) }))
		p, dep := c.Policy(), &counter{}
		_, _, _ = get(t, p, dep.op, "a")
		_, _, _ = get(t, p, dep.op, "b")
		synctest.Wait()
		if diff := cmp.Diff(cache.Stats{Misses: 2}, c.Stats()); diff != "" {
			t.Fatalf("stats with a Store mismatch (-want +got):\n%s", diff)
		}
		c.Purge(context.Background())
		if len(st.m) != 0 {
			t.Fatalf("the Store holds %d entries after Purge", len(st.m))
		}
		// An entry the Store returns past its Discard time is a miss.
		st.Set(context.Background(), "old", cache.Entry[string]{Value: "stale", Expires: clk.Now(), Discard: clk.Now()})
		v, info, _ := get(t, p, dep.op, "old")
		if v == "stale" || info.Outcome != cache.Miss {
			t.Fatalf("an entry past its Discard time: got %q, %v; want a miss", v, info.Outcome)
		}
	})
}
