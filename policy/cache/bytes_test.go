package cache_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/cache"
)

// MaxBytes is a bound the values held may reach: a value of MaxBytes on
// its own is stored, and values adding up to MaxBytes are all kept; a value
// over MaxBytes is not stored, even with MaxBytes 1.
func TestMaxBytesIsReachable(t *testing.T) {
	size := cache.WithSize(func(s string) int64 { return int64(len(s)) })
	load := func(v string) func(context.Context) (string, error) {
		return func(context.Context) (string, error) { return v, nil }
	}
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Minute, cache.WithMaxBytes(4), size)
		p := c.Policy()
		wantDo(t, p, "a", load("abcd"), "abcd", nil)
		synctest.Wait()
		if diff := cmp.Diff(cache.Stats{Misses: 1, Entries: 1, Bytes: 4}, c.Stats()); diff != "" {
			t.Fatalf("a value of MaxBytes: stats mismatch (-want +got):\n%s", diff)
		}
		c.Purge(context.Background())
		wantDo(t, p, "a", load("ab"), "ab", nil)
		wantDo(t, p, "b", load("cd"), "cd", nil)
		synctest.Wait()
		if diff := cmp.Diff(cache.Stats{Misses: 3, Entries: 2, Bytes: 4}, c.Stats()); diff != "" {
			t.Fatalf("values adding up to MaxBytes: stats mismatch (-want +got):\n%s", diff)
		}
	})
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Minute, cache.WithMaxBytes(1), size)
		wantDo(t, c.Policy(), "a", load("ab"), "ab", nil)
		synctest.Wait()
		if s := c.Stats(); s.Entries != 0 || s.Bytes != 0 {
			t.Fatalf("stats %+v: a value over MaxBytes 1 was stored", s)
		}
	})
}
