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

// Each entry held arms one timer of the clock (its freshness), and a load
// one more (LoadTimeout) while it runs: an entry that leaves the store, by
// Invalidate, Purge or eviction, and a load that ends,
// leave no timer armed behind them.
func TestNoTimerLeftArmed(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		c := cache.New[string](time.Minute, cache.WithClock(clk), cache.WithMaxEntries(2), cache.WithStaleIfError(time.Hour))
		p, dep := c.Policy(), &counter{}
		ctx := context.Background()
		waiters := func(want int, after string) {
			t.Helper()
			synctest.Wait()
			if got := clk.Waiters(); got != want {
				t.Fatalf("after %s: %d timers armed, want %d", after, got, want)
			}
		}
		release := make(chan struct{})
		got := make(chan string, 1)
		go func() {
			v, _ := p.Do(cache.Key(ctx, "a"), func(context.Context) (string, error) { <-release; return "a", nil })
			got <- v
		}()
		waiters(1, "a load started") // its LoadTimeout
		close(release)
		<-got
		waiters(1, "the load ended") // a's freshness
		_, _, _ = get(t, p, dep.op, "b")
		waiters(2, "a second entry")
		_, _, _ = get(t, p, dep.op, "c") // evicts one
		waiters(2, "an eviction")
		c.Invalidate(ctx, "c")
		waiters(1, "Invalidate")
		clk.Advance(time.Minute) // the TTL of the entry left: its timer fires
		if s := c.Stats(); s.Entries != 1 {
			t.Fatalf("stats %+v: want 1 entry", s)
		}
		waiters(0, "the entry's TTL")
		for _, k := range []string{"a", "b"} {
			_, _, _ = get(t, p, dep.op, k)
		}
		waiters(2, "two new values")
		c.Purge(ctx)
		waiters(0, "Purge")
	})
}

// An entry past its TTL and its stale windows is dropped when a call finds
// it, even if the call's load fails and stores nothing.
func TestEntryPastItsUseIsDropped(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		c := cache.New[string](time.Minute, cache.WithClock(clk), cache.WithStaleIfError(time.Hour), cache.WithStaleWhileRevalidate(time.Second))
		p, dep := c.Policy(), &counter{}
		_, _, _ = get(t, p, dep.op, "k")
		synctest.Wait()
		clk.Advance(time.Minute + time.Hour - 1)
		dep.fail(errDown)
		if v, info, err := get(t, p, dep.op, "k"); v != "v1" || err != nil || !info.Stale {
			t.Fatalf("within StaleIfError: %q, %+v, %v; want the stale v1", v, info, err)
		}
		clk.Advance(1)
		if v, _, err := get(t, p, dep.op, "k"); v != "" || err == nil {
			t.Fatalf("past StaleIfError: %q, %v; want the load's error", v, err)
		}
		synctest.Wait()
		if s := c.Stats(); s.Entries != 0 {
			t.Fatalf("stats %+v: the entry past its use is still held", s)
		}
	})
}
