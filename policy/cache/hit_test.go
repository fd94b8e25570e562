package cache_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/cache"
)

func TestHitAllocatesNothing(t *testing.T) {
	c := cache.New[int](time.Hour)
	p := c.Policy()
	op := func(context.Context) (int, error) { return 1, nil }
	get := cache.Guard(c, func(k string) string { return k }, func(context.Context, string) (int, error) { return 1, nil })
	keyed := cache.Key(context.Background(), "k")
	withInfo, info := cache.WithInfo(keyed)
	bg := context.Background()
	_, _ = p.Do(keyed, op) // stored
	for name, call := range map[string]func(){
		"Policy":          func() { _, _ = p.Do(keyed, op) },
		"Policy WithInfo": func() { _, _ = p.Do(withInfo, op) },
		"Guard":           func() { _, _ = get(bg, "k") },
		"Guard WithInfo":  func() { _, _ = get(withInfo, "k") },
	} {
		if n := testing.AllocsPerRun(100, call); n != 0 {
			t.Errorf("%s: a hit allocates %v times, want 0", name, n)
		}
	}
	if info.Outcome != cache.Hit {
		t.Errorf("info %+v after hits, want a hit", *info)
	}
}

// countingCtx counts the lookups of values in it.
type countingCtx struct {
	context.Context
	n *int
}

func (c countingCtx) Value(key any) any {
	*c.n++
	return c.Context.Value(key)
}

func TestPolicyHitLooksUpTheContextOnce(t *testing.T) {
	c := cache.New[int](time.Hour)
	p := c.Policy()
	op := func(context.Context) (int, error) { return 1, nil }
	for _, tc := range []struct {
		name string
		ctx  context.Context
	}{
		{"Key", cache.Key(context.Background(), "k")},
		{"Key in WithInfo", func() context.Context { ctx, _ := cache.WithInfo(cache.Key(context.Background(), "k")); return ctx }()},
	} {
		_, _ = p.Do(tc.ctx, op)
		var n int
		if _, err := p.Do(countingCtx{tc.ctx, &n}, op); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("%s: a hit looked up the context %d times, want 1", tc.name, n)
		}
	}
}

func TestKeyAndInfoInEitherOrder(t *testing.T) {
	c := cache.New[string](time.Hour)
	p := c.Policy()
	op := func(context.Context) (string, error) { return "v", nil }
	infoFirst, info1 := cache.WithInfo(context.Background())
	infoFirst = cache.Key(infoFirst, "k")
	keyFirst, info2 := cache.WithInfo(cache.Key(context.Background(), "k"))
	if got := cache.KeyOf(keyFirst); got != "k" {
		t.Fatalf("KeyOf(WithInfo(Key(k))) = %q, want k", got)
	}
	_, _ = p.Do(infoFirst, op)
	_, _ = p.Do(keyFirst, op)
	if diff := cmp.Diff([]cache.Info{{Outcome: cache.Miss}, {Outcome: cache.Hit}}, []cache.Info{*info1, *info2}); diff != "" {
		t.Fatalf("infos mismatch (-want +got):\n%s", diff)
	}
	// A key set again keeps the Info; an Info set again keeps the key.
	rekeyed := cache.Key(infoFirst, "other")
	_, _ = p.Do(rekeyed, op)
	if info1.Outcome != cache.Miss || cache.KeyOf(rekeyed) != "other" {
		t.Fatalf("after Key(ctx, other): info %+v, key %q; want a miss of other", *info1, cache.KeyOf(rekeyed))
	}
	reinfo, info3 := cache.WithInfo(keyFirst)
	_, _ = p.Do(reinfo, op)
	if info3.Outcome != cache.Hit || *info2 != (cache.Info{Outcome: cache.Hit}) {
		t.Fatalf("after WithInfo(ctx): new info %+v, want a hit of k", *info3)
	}
}

// TestEvictionGivesUsedEntriesASecondChance pins the approximation of
// least-recently-used order: a hit marks its entry without moving it; the
// back entry, if marked, loses its mark and goes to the front. So when
// every entry was hit, the one stored first goes, whichever was hit last.
func TestEvictionGivesUsedEntriesASecondChance(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		rec := &recorder{}
		c := cache.New[string](time.Minute, cache.WithMaxEntries(3), cache.WithObserver(rec))
		p, dep := c.Policy(), &counter{}
		for _, k := range []string{"a", "b", "c", "b", "c", "a", "d"} {
			_, _, _ = get(t, p, dep.op, k)
			synctest.Wait()
		}
		if diff := cmp.Diff([]string{"cache.evicted a"}, evictions(rec.take())); diff != "" {
			t.Fatalf("evictions mismatch (-want +got):\n%s", diff)
		}
		// b and c lost their marks on the way; d was never hit: the next
		// store evicts b, the back, with no second chance.
		_, _, _ = get(t, p, dep.op, "d") // d marked
		_, _, _ = get(t, p, dep.op, "e")
		synctest.Wait()
		if diff := cmp.Diff([]string{"cache.evicted b"}, evictions(rec.take())); diff != "" {
			t.Fatalf("evictions mismatch (-want +got):\n%s", diff)
		}
	})
}

func evictions(ev []string) []string {
	var out []string
	for _, e := range ev {
		if len(e) > len("cache.evicted") && e[:len("cache.evicted")] == "cache.evicted" {
			out = append(out, e)
		}
	}
	return out
}

// TestManyKeysInOneShard fills one shard's table past several growths,
// removes half its keys (their slots become tombs) and stores them again.
func TestManyKeysInOneShard(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		const n = 1000
		c := cache.New[string](time.Minute, cache.WithMaxEntries(n)) // < 1024: one shard
		get := cache.Guard(c, func(k string) string { return k }, func(_ context.Context, k string) (string, error) { return "v" + k, nil })
		ctx := context.Background()
		check := func(round string) {
			t.Helper()
			for i := range n {
				k := fmt.Sprint(i)
				if v, err := get(ctx, k); v != "v"+k || err != nil {
					t.Fatalf("%s: get(%s) = %q, %v", round, k, v, err)
				}
			}
		}
		check("store")
		check("hit")
		if s := c.Stats(); s.Hits != n || s.Misses != n || s.Entries != n {
			t.Fatalf("stats %+v: want %d hits, misses and entries", s, n)
		}
		for i := 0; i < n; i += 2 {
			c.Invalidate(ctx, fmt.Sprint(i))
		}
		if s := c.Stats(); s.Entries != n/2 {
			t.Fatalf("stats %+v: want %d entries after invalidating half", s, n/2)
		}
		check("store again")
		if s := c.Stats(); s.Hits != n+n/2 || s.Misses != n+n/2 || s.Entries != n || s.Evictions != 0 {
			t.Fatalf("stats %+v: want %d hits and misses, %d entries, no eviction", s, n+n/2, n)
		}
	})
}

// TestHitsRaceWithStoresAndRemovals runs hits that read without a lock
// beside loads that store, evict, and invalidate (run it with -race).
// Every value returned must be its key's, and no call may get a value
// of its key that Invalidate removed before the call started.
func TestHitsRaceWithStoresAndRemovals(t *testing.T) {
	const keys, workers, rounds = 40, 4, 2000
	c := cache.New[string](time.Hour, cache.WithMaxEntries(16))
	var gen [keys]atomic.Int64 // bumped with each Invalidate of the key
	var inv sync.RWMutex       // held across a bump and its Invalidate
	get := cache.Guard(c, func(k int) string { return fmt.Sprint(k) }, func(_ context.Context, k int) (string, error) {
		return fmt.Sprintf("%d@%d", k, gen[k].Load()), nil
	})
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, workers+1)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				k := (i*7 + w) % keys
				inv.RLock()
				before := gen[k].Load()
				inv.RUnlock()
				v, err := get(ctx, k)
				var gotK, gotGen int64
				if _, serr := fmt.Sscanf(v, "%d@%d", &gotK, &gotGen); err != nil || serr != nil || gotK != int64(k) || gotGen < before {
					errs <- fmt.Errorf("get(%d) = %q, %v: want %d@%d or later", k, v, err, k, before)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range rounds / 4 {
			k := i % keys
			inv.Lock()
			gen[k].Add(1)
			c.Invalidate(ctx, fmt.Sprint(k))
			inv.Unlock()
			if i%100 == 99 {
				c.Purge(ctx)
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
