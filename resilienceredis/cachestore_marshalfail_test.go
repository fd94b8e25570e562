package resilienceredis

import (
	"errors"
	"testing"
	"time"
)

var errMarshal = errors.New("cannot marshal")

// pickyCodec is JSONCodec, but refuses to write a user named "bad".
type pickyCodec struct{ jsonCodec[user] }

func (c pickyCodec) Marshal(v user) ([]byte, error) {
	if v.Name == "bad" {
		return nil, errMarshal
	}
	return c.jsonCodec.Marshal(v)
}

// A Set whose value the Codec cannot write is a failed Set: it is
// reported as a CacheStoreFailed event of the key with the codec's error,
// and the key's earlier entry does not stay in place of the value the
// cache now holds (Set stores e "in place of any entry of key"): the next
// Get is a miss.
func TestCacheStoreMarshalFails(t *testing.T) {
	ctx := ctxFor(t)
	ev := &events{}
	s := NewCacheStore[user](newClient(t), "users", pickyCodec{}, WithCachePrefix(testPrefix(t)),
		WithCacheTimeout(10*time.Second), WithCacheObserver(ev))
	s.Set(ctx, "k", entryAt(user{"Ada", 36}, time.Minute, time.Minute))
	if _, ok := s.Get(ctx, "k"); !ok {
		t.Fatal("Get after a Set of a value the codec writes: miss")
	}
	s.Set(ctx, "k", entryAt(user{"bad", 1}, time.Minute, time.Minute))
	if e, ok := s.Get(ctx, "k"); ok {
		t.Errorf("Get after a Set the codec refused = %+v, true; want a miss, not the older entry", e)
	}
	got := ev.list()
	if len(got) != 1 {
		t.Fatalf("events %v; want one", got)
	}
	if e := got[0]; e.Type != CacheStoreFailed || e.Name != "users" || e.Key != "k" || !errors.Is(e.Err, errMarshal) {
		t.Errorf("event %+v; want %s of users, key k, with the codec's error", e, CacheStoreFailed)
	}
}
