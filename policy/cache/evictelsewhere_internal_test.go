package cache

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/telemetry"
)

type evictions struct {
	mu   sync.Mutex
	keys []string
}

func (e *evictions) Observe(ev telemetry.Event) {
	if ev.Type == EventEvicted {
		e.mu.Lock()
		e.keys = append(e.keys, ev.Key)
		e.mu.Unlock()
	}
}

// A store into a shard that holds nothing else still keeps the cache
// within MaxEntries: the entry evicted comes from another shard. The
// filler keys all lie in one shard a few shards away from the new key's,
// so the shards in between, empty, are passed over.
func TestStoreIntoAnEmptyShardEvictsElsewhere(t *testing.T) {
	const max = 1024
	ev := &evictions{}
	c := New[string](time.Hour, WithMaxEntries(max), WithObserver(ev))
	if len(c.shards) < 8 {
		t.Fatalf("%d shards: the test needs a sharded cache", len(c.shards))
	}
	shy, hy := c.shard("y")
	target := &c.shards[(hy+5)&c.mask]
	if target == shy {
		t.Fatal("the filler keys' shard is y's: the keys must spread over the shards")
	}
	var keys []string
	for i := 0; len(keys) < max; i++ {
		k := strconv.Itoa(i)
		if sh, _ := c.shard(k); sh == target {
			keys = append(keys, k)
		}
	}
	get := Guard(c, func(k string) string { return k }, func(_ context.Context, k string) (string, error) { return k, nil })
	ctx := context.Background()
	for _, k := range keys {
		_, _ = get(ctx, k)
	}
	if s := c.Stats(); s.Entries != max || s.Evictions != 0 {
		t.Fatalf("stats %+v: want %d entries, none evicted", s, max)
	}
	storeWithin(t, get, "y")
	s := c.Stats()
	if s.Entries != max || s.Evictions != 1 {
		t.Fatalf("stats %+v after a store into an empty shard: want %d entries, 1 evicted", s, max)
	}
	if len(ev.keys) != 1 || !slices.Contains(keys, ev.keys[0]) {
		t.Fatalf("evicted %q, want one of the filler keys", ev.keys)
	}
	infoCtx, info := WithInfo(ctx)
	if v, _ := get(infoCtx, "y"); v != "y" || info.Outcome != Hit {
		t.Fatalf("y: %q, %v; want the new entry held (a hit)", v, info.Outcome)
	}
}

// storeWithin stores k through get, failing t if the store has not
// returned after a bound far beyond the microseconds it takes (an
// eviction that never ends).
func storeWithin(t *testing.T, get func(context.Context, string) (string, error), k string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = get(context.Background(), k)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatalf("the store of %s did not return after 2s", k)
	}
}

// fillShards returns a sharded cache of MaxEntries max, observed by ev,
// holding max entries spread evenly over the shards of hash offsets
// offs from y's, and each offset's keys in the order stored.
func fillShards(t *testing.T, max int, ev *evictions, offs ...uint64) (*Cache[string], func(context.Context, string) (string, error), [][]string) {
	t.Helper()
	c := New[string](time.Hour, WithMaxEntries(max), WithObserver(ev))
	if len(c.shards) < 8 {
		t.Fatalf("%d shards: the test needs a sharded cache", len(c.shards))
	}
	_, hy := c.shard("y")
	keys := make([][]string, len(offs))
	for j, off := range offs {
		target := &c.shards[(hy+off)&c.mask]
		for i := 0; len(keys[j]) < max/len(offs); i++ {
			k := strconv.Itoa(i)
			if sh, _ := c.shard(k); sh == target {
				keys[j] = append(keys[j], k)
			}
		}
	}
	get := Guard(c, func(k string) string { return k }, func(_ context.Context, k string) (string, error) { return k, nil })
	for _, ks := range keys {
		for _, k := range ks {
			_, _ = get(context.Background(), k)
		}
	}
	if s := c.Stats(); s.Entries != max || s.Evictions != 0 {
		t.Fatalf("stats %+v: want %d entries, none evicted", s, max)
	}
	return c, get, keys
}

// The entry evicted elsewhere comes from the first shard after the new
// key's that holds one, not from a shard before it.
func TestEvictElsewhereWalksTheShardsAfter(t *testing.T) {
	ev := &evictions{}
	_, get, keys := fillShards(t, 1024, ev, 1, 15) // 15: the shard just before y's
	storeWithin(t, get, "y")
	if len(ev.keys) != 1 || ev.keys[0] != keys[0][0] {
		t.Fatalf("evicted %q, want [%s]: the oldest entry of the shard after y's", ev.keys, keys[0][0])
	}
}

// Evicting elsewhere gives every used entry of the shard its second
// chance, the last one too: with all of them used, the oldest goes.
func TestEvictElsewhereGivesEveryUsedEntryItsChance(t *testing.T) {
	ev := &evictions{}
	_, get, keys := fillShards(t, 1024, ev, 3)
	for _, k := range keys[0] {
		_, _ = get(context.Background(), k) // a hit: marked used
	}
	storeWithin(t, get, "y")
	if len(ev.keys) != 1 || ev.keys[0] != keys[0][0] {
		t.Fatalf("evicted %q, want [%s]: every entry used, the oldest goes after its chance", ev.keys, keys[0][0])
	}
}
