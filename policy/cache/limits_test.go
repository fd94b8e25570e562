package cache_test

import (
	"context"
	"math"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/cache"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// A cache that is no longer reachable is collected with its values,
// although the timers of its entries run until their TTL.
func TestDroppedCacheReleasesItsValues(t *testing.T) {
	const n = 20_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var values []weak.Pointer[[1024]byte]
	func() {
		c := cache.New[*[1024]byte](time.Hour, cache.WithMaxEntries(n))
		get := cache.Guard(c, func(k string) string { return k }, func(context.Context, string) (*[1024]byte, error) {
			return new([1024]byte), nil
		})
		for i := range n {
			v, err := get(context.Background(), strconv.Itoa(i))
			if err != nil {
				t.Fatal(err)
			}
			if i%1000 == 0 {
				values = append(values, weak.Make(v))
			}
		}
		if s := c.Stats(); s.Entries != n {
			t.Fatalf("stats %+v: want %d entries", s, n)
		}
	}()
	for range 3 {
		runtime.GC()
	}
	for i, wp := range values {
		if wp.Value() != nil {
			t.Fatalf("value %d of a dropped cache is still reachable", i*1000)
		}
	}
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > n*1024/2 {
		t.Fatalf("the heap holds %d bytes more after the cache of %d KiB values was dropped", grew, n)
	}
}

// fill calls get for keys 0..n-1 and returns how many loads they made.
func fill(t *testing.T, c *cache.Cache[int], n int) (loads int) {
	t.Helper()
	get := cache.Guard(c, func(i int) string { return strconv.Itoa(i) }, func(context.Context, int) (int, error) {
		loads++
		return 1, nil
	})
	for i := range n {
		if _, err := get(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	return loads
}

// MaxEntries distinct keys fit, however they hash over the shards; one
// more evicts exactly one.
func TestMaxEntriesKeysFit(t *testing.T) {
	for _, n := range []int{1, 1000, 1024, 4096, 10_000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			c := cache.New[int](time.Hour, cache.WithMaxEntries(n))
			if loads := fill(t, c, n); loads != n {
				t.Fatalf("first pass: %d loads, want %d", loads, n)
			}
			if loads := fill(t, c, n); loads != 0 {
				t.Fatalf("second pass: %d loads (%d hits of %d), want all hits; stats %+v", loads, n-loads, n, c.Stats())
			}
			if s := c.Stats(); s.Evictions != 0 || s.Entries != n {
				t.Fatalf("stats %+v: want %d entries, 0 evictions", s, n)
			}
			_ = fill(t, c, n+1)
			if s := c.Stats(); s.Evictions != 1 || s.Entries != n {
				t.Fatalf("after key %d: stats %+v: want %d entries, 1 eviction", n, s, n)
			}
		})
	}
}

// A cache adds no call of the dependency and no time of its own: a
// pipeline has the same bounds with it as without it.
func TestPolicyBoundsAsWithoutTheCache(t *testing.T) {
	c := cache.New[int](time.Minute, cache.WithStaleWhileRevalidate(time.Minute))
	inner := resilience.Then(retry.New[int](retry.WithAttempts(3)), timeout.New[int](time.Second))
	want := inner.Bounds()
	if want.CallsUnbounded != "" || want.DurationUnbounded != "" {
		t.Fatalf("the pipeline without the cache is unbounded: %v", want)
	}
	got := resilience.Then(c.Policy(), inner).Bounds()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("bounds mismatch (-without the cache +with it):\n%s", diff)
	}
	if ls := c.Policy().Layers(); len(ls) != 1 || ls[0].Kind != resilience.KindOther || ls[0].MaxWait != 0 {
		t.Fatalf("layers %+v: want one of kind other that adds no wait", ls)
	}
	if fs := resilience.Then(c.Policy(), inner).Check(); len(fs) != len(inner.Check()) {
		t.Fatalf("Check finds %v with the cache, %v without", fs, inner.Check())
	}
}

// Windows that add up past the longest Duration keep the entry to the
// latest time, not to a time wrapped into the past.
func TestLongWindowsSaturate(t *testing.T) {
	st := &mapStore{m: map[string]cache.Entry[string]{}}
	const century = 100 * 365 * 24 * time.Hour
	cfg := cache.Config{TTL: math.MaxInt64, StaleIfError: century, StaleWhileRevalidate: century, Store: st}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	c := cache.New[string](math.MaxInt64, cache.WithStore[string](st), cache.WithStaleIfError(century), cache.WithStaleWhileRevalidate(century))
	start := time.Now()
	loads := 0
	op := func(context.Context) (string, error) { loads++; return "v", nil }
	for range 2 {
		if v, err := c.Policy().Do(cache.Key(context.Background(), "k"), op); v != "v" || err != nil {
			t.Fatalf("Do = %q, %v", v, err)
		}
	}
	if loads != 1 {
		t.Fatalf("%d loads, want 1: the second call should hit", loads)
	}
	e := st.m["k"]
	if want := start.Add(math.MaxInt64); e.Discard.Before(want) || e.Discard.Before(e.Expires) {
		t.Fatalf("entry expires %v, discarded %v: want a discard time at or after %v and after expiry", e.Expires, e.Discard, want)
	}
}

// Stores in several shards at once evict exactly as many entries as the
// bound needs: no more, no fewer.
func TestMaxEntriesUnderConcurrentStores(t *testing.T) {
	const n, workers, per = 2048, 4, 600
	c := cache.New[int](time.Hour, cache.WithMaxEntries(n))
	get := cache.Guard(c, func(k string) string { return k }, func(context.Context, string) (int, error) { return 1, nil })
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range per {
				_, _ = get(context.Background(), strconv.Itoa(w)+"/"+strconv.Itoa(i))
			}
		})
	}
	wg.Wait()
	if s := c.Stats(); s.Entries != n || s.Evictions != workers*per-n {
		t.Fatalf("stats %+v: want %d entries, %d evictions", s, n, workers*per-n)
	}
}
