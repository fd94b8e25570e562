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

// An entry evicted for MaxBytes leaves the count of entries too: MaxEntries
// entries still fit after byte evictions.
func TestByteEvictionsFreeTheirEntries(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Minute, cache.WithMaxEntries(2), cache.WithMaxBytes(2),
			cache.WithSize(func(s string) int64 { return int64(len(s)) }))
		p := c.Policy()
		for _, kv := range [][2]string{{"a", "xx"}, {"b", "yy"}, {"c", ""}} { // b evicts a for bytes
			wantDo(t, p, kv[0], func(context.Context) (string, error) { return kv[1], nil }, kv[1], nil)
			synctest.Wait()
		}
		if s := c.Stats(); s.Entries != 2 || s.Evictions != 1 || s.Bytes != 2 {
			t.Fatalf("stats %+v: want b and c held (2 bytes), a evicted", s)
		}
	})
}

// A call through the Policy with an empty key records Bypassed in its
// Info, overwriting what an earlier call left there.
func TestPolicyEmptyKeyRecordsBypassed(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		key := "k"
		c := cache.New[string](time.Minute, cache.WithKey(func(context.Context) string { return key }))
		p := c.Policy()
		ctx, info := cache.WithInfo(context.Background())
		op := func(context.Context) (string, error) { return "v", nil }
		for range 2 {
			if _, err := p.Do(ctx, op); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		if info.Outcome != cache.Hit {
			t.Fatalf("second call: %v, want a hit", info.Outcome)
		}
		key = ""
		if _, err := p.Do(ctx, op); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(cache.Info{Outcome: cache.Bypassed}, *info); diff != "" {
			t.Fatalf("Info of a bypassed call mismatch (-want +got):\n%s", diff)
		}
	})
}
