package resilienceredis

import (
	"errors"
	"testing"
	"time"
)

// An envelope whose kind is neither a value (0) nor an error's text (1)
// is not one the store can have written: Get is a miss, deletes it, and
// reports it with ErrBadEntry, even when its body is a value the codec
// reads.
func TestCacheStoreUnknownKindIsBadEntry(t *testing.T) {
	ctx := ctxFor(t)
	prefix := testPrefix(t)
	ev := &events{}
	s := newUserStore(t, prefix, WithCacheTimeout(10*time.Second), WithCacheObserver(ev))
	rdb := newClient(t)
	for _, kind := range []byte{2, 255} {
		b, err := s.encode(entryAt(user{"Ada", 36}, time.Minute, time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		b[1] = kind
		key := prefix + "cache:{users}:0:k"
		if err := rdb.Set(ctx, key, b, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		if e, ok := s.Get(ctx, "k"); ok {
			t.Errorf("kind %d: Get = %+v, true; want a miss", kind, e)
		}
		if n, err := rdb.Exists(ctx, key).Result(); err != nil || n != 0 {
			t.Errorf("kind %d: key still there after Get (EXISTS = %d, %v)", kind, n, err)
		}
	}
	got := ev.list()
	if len(got) != 2 {
		t.Fatalf("events %v; want 2", got)
	}
	for _, e := range got {
		if e.Type != CacheStoreFailed || e.Key != "k" || !errors.Is(e.Err, ErrBadEntry) {
			t.Errorf("event %+v: want %s of key k with ErrBadEntry", e, CacheStoreFailed)
		}
	}
}

// When Get finds a value it cannot read and the round trip that deletes
// it fails, both failures are reported: the unreadable value (ErrBadEntry)
// and the failed delete (its error). Get is a miss.
func TestCacheStoreBadEntryDeleteFails(t *testing.T) {
	ctx := ctxFor(t)
	prefix := testPrefix(t)
	rdb := newClient(t)
	refused := errors.New("delete refused")
	rdb.AddHook(cacheScriptHook{script: cacheDelIfScript, fail: refused})
	ev := &events{}
	s := NewCacheStore[user](rdb, "users", nil, WithCachePrefix(prefix),
		WithCacheTimeout(10*time.Second), WithCacheObserver(ev))
	key := prefix + "cache:{users}:0:k"
	if err := rdb.Set(ctx, key, "garbage", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if e, ok := s.Get(ctx, "k"); ok {
		t.Errorf("Get = %+v, true; want a miss", e)
	}
	got := ev.list()
	if len(got) != 2 {
		t.Fatalf("events %v; want 2: the unreadable value, the failed delete", got)
	}
	if e := got[0]; e.Type != CacheStoreFailed || e.Key != "k" || !errors.Is(e.Err, ErrBadEntry) {
		t.Errorf("first event %+v: want %s of key k with ErrBadEntry", e, CacheStoreFailed)
	}
	if e := got[1]; e.Type != CacheStoreFailed || e.Key != "k" || !errors.Is(e.Err, refused) {
		t.Errorf("second event %+v: want %s of key k with the delete's error %v", e, CacheStoreFailed, refused)
	}
}
