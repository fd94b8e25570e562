package cache_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/cache"
)

// The second chance clears an entry's mark: an entry used before the last
// eviction, and not since, is evicted before one stored since; and every
// used entry gets its chance before an unused one is evicted.
func TestSecondChanceClearsTheMark(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Hour, cache.WithMaxEntries(4))
		p, dep := c.Policy(), &counter{}
		for _, k := range []string{"z", "y", "x", "w", "z", "y", "x", "w", "v"} { // v evicts z: all used, z the oldest
			_, _, _ = get(t, p, dep.op, k)
			synctest.Wait()
		}
		if _, info, _ := get(t, p, dep.op, "w"); info.Outcome != cache.Hit {
			t.Fatalf("w: %v, want held (used, newer than z)", info.Outcome)
		}
		synctest.Wait()
		_, _, _ = get(t, p, dep.op, "u") // evicts y: its mark was cleared, w was used again
		synctest.Wait()
		for k, want := range map[string]cache.Outcome{"w": cache.Hit, "v": cache.Hit, "x": cache.Hit} {
			if _, info, _ := get(t, p, dep.op, k); info.Outcome != want {
				t.Fatalf("%s: %v, want %v", k, info.Outcome, want)
			}
		}
		if s := c.Stats(); s.Evictions != 2 {
			t.Fatalf("stats %+v: want 2 evictions", s)
		}
	})
}

// An entry that had its second chance and was not used since is evicted
// ahead of one used since, even when it is not at the back: the chance
// clears the mark of every entry it passes over, not only the victim's.
func TestSecondChanceLeavesPassedEntriesUnmarked(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Hour, cache.WithMaxEntries(3))
		p, dep := c.Policy(), &counter{}
		// a, b, c stored and used; d evicts a, the oldest, after every
		// entry had its chance: b and c are held, unmarked.
		for _, k := range []string{"a", "b", "c", "a", "b", "c", "d"} {
			_, _, _ = get(t, p, dep.op, k)
			synctest.Wait()
		}
		_, _, _ = get(t, p, dep.op, "b") // b used again, c not
		synctest.Wait()
		_, _, _ = get(t, p, dep.op, "e") // b gets a chance, c is evicted
		synctest.Wait()
		for k, want := range map[string]cache.Outcome{"b": cache.Hit, "d": cache.Hit, "e": cache.Hit} {
			if _, info, _ := get(t, p, dep.op, k); info.Outcome != want {
				t.Fatalf("%s: %v, want %v (c evicted: unused since its chance)", k, info.Outcome, want)
			}
		}
		if s := c.Stats(); s.Evictions != 2 || s.Entries != 3 {
			t.Fatalf("stats %+v: want 2 evictions, 3 entries", s)
		}
	})
}

// StaleIfError of 1ns serves a value at its expiry instant.
func TestStaleIfErrorOfOneNanosecond(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithStaleIfError(1))
		p := c.Policy()
		wantDo(t, p, "k", func(context.Context) (string, error) { return "v", nil }, "v", nil)
		synctest.Wait()
		clk.Advance(time.Second)
		wantDo(t, p, "k", func(context.Context) (string, error) { return "", errDown }, "v", nil)
	})
}

// A caller whose load failed does not take a cached error stored meanwhile
// by another load for a value: it gets its own load's error.
func TestFailedLoadDoesNotServeANegativeEntry(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		errNotFound := errors.New("not found")
		c := cache.New[string](time.Second, cache.WithStaleIfError(time.Minute),
			cache.WithNegativeTTL(time.Minute), cache.WithNegativeIf(func(err error) bool { return errors.Is(err, errNotFound) }))
		p := c.Policy()
		release := make(chan struct{})
		type result struct {
			v   string
			err error
		}
		got := make(chan result, 1)
		go func() {
			v, err := p.Do(cache.Key(context.Background(), "k"), func(context.Context) (string, error) { <-release; return "", errDown })
			got <- result{v, err}
		}()
		synctest.Wait()
		c.Invalidate(context.Background(), "k")
		wantDo(t, p, "k", func(context.Context) (string, error) { return "", errNotFound }, "", errNotFound)
		synctest.Wait()
		close(release)
		if r := <-got; !errors.Is(r.err, errDown) {
			t.Fatalf("got (%q, %v), want the load's own error", r.v, r.err)
		}
	})
}
