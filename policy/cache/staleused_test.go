package cache_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/cache"
)

// A stale value served in place of a failed load marks its entry used, as
// a hit does: eviction gives it a second chance.
func TestStaleServedEntryGetsASecondChance(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithMaxEntries(2), cache.WithStaleIfError(time.Hour))
		p := c.Policy()
		ok := func(v string) func(context.Context) (string, error) {
			return func(context.Context) (string, error) { return v, nil }
		}
		fail := func(context.Context) (string, error) { return "", errDown }
		wantDo(t, p, "a", ok("a"), "a", nil)
		wantDo(t, p, "b", ok("b"), "b", nil)
		synctest.Wait()
		clk.Advance(2 * time.Second)
		wantDo(t, p, "a", fail, "a", nil) // stale a: used
		wantDo(t, p, "c", ok("c"), "c", nil)
		synctest.Wait()
		wantDo(t, p, "a", fail, "a", nil)    // a kept
		wantDo(t, p, "b", fail, "", errDown) // b evicted
	})
}

// getBackStore calls back into its cache from Get, as a Store that
// invalidates on read would: it would deadlock if the cache held a lock of
// its own while it calls the Store.
type getBackStore struct {
	mapStore
	c *cache.Cache[string]
}

func (s *getBackStore) Get(ctx context.Context, k string) (cache.Entry[string], bool) {
	s.c.Invalidate(ctx, k) // takes the lock of k's shard
	return cache.Entry[string]{}, false
}

func TestStoreGetIsCalledWithoutLocks(t *testing.T) {
	st := &getBackStore{mapStore: mapStore{m: map[string]cache.Entry[string]{}}}
	st.c = cache.New[string](time.Minute, cache.WithStore[string](st))
	done := make(chan string, 1)
	go func() {
		v, _ := st.c.Policy().Do(cache.Key(context.Background(), "k"), func(context.Context) (string, error) { return "v", nil })
		done <- v
	}()
	if v := testwait.RecvFor(t, done, 5*time.Second, "a call through a cache whose Store's Get calls back into it"); v != "v" {
		t.Fatalf("got %q, want v", v)
	}
}
