package resilienceredis

import (
	"strconv"
	"testing"
	"time"
)

// A CacheStore without WithCachePrefix keeps its keys under "resilience:"
// (WithCachePrefix: "" means "resilience:"): an entry at
// "resilience:cache:{name}:0:key", the generation that Purge increments
// at "resilience:cache:{name}:gen".
func TestCacheStoreDefaultPrefix(t *testing.T) {
	ctx := ctxFor(t)
	rdb := newClient(t)
	name := "defaultprefix-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.FormatInt(unique.Add(1), 10)
	entry := "resilience:cache:{" + name + "}:0:k"
	gen := "resilience:cache:{" + name + "}:gen"
	t.Cleanup(func() { rdb.Del(ctxFor(t), entry, gen) })
	for _, opts := range [][]CacheStoreOption{nil, {WithCachePrefix("")}} {
		s := NewCacheStore[user](rdb, name, nil, append(opts, WithCacheTimeout(10*time.Second))...)
		if err := rdb.Del(ctx, entry, gen).Err(); err != nil {
			t.Fatal(err)
		}
		s.Set(ctx, "k", entryAt(user{"Ada", 36}, time.Minute, time.Minute))
		if n, err := rdb.Exists(ctx, entry).Result(); err != nil || n != 1 {
			t.Errorf("options %d: after Set, EXISTS %s = %d, %v; want 1", len(opts), entry, n, err)
		}
		s.Purge(ctx)
		if g, err := rdb.Get(ctx, gen).Result(); err != nil || g != "1" {
			t.Errorf("options %d: after Purge, GET %s = %q, %v; want \"1\"", len(opts), gen, g, err)
		}
	}
}
