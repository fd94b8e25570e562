package resilienceredis

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A CacheStoreFailed event is a failure of the store (a round trip that
// failed or outlived Timeout, a value it cannot read or write), not the
// end of the caller's own context: operations under a cancelled context
// report nothing of the cancellation, and still report a failure that is
// not it (the codec's).
func TestCacheStoreCallerContextNotReported(t *testing.T) {
	ctx, cancel := context.WithCancel(ctxFor(t))
	cancel()
	ev := &events{}
	s := NewCacheStore[user](newClient(t), "users", pickyCodec{}, WithCachePrefix(testPrefix(t)),
		WithCacheTimeout(10*time.Second), WithCacheObserver(ev))
	t.Cleanup(s.r.wg.Wait)
	s.Get(ctx, "k")
	s.Set(ctx, "k", entryAt(user{"Ada", 36}, time.Minute, time.Minute))
	s.Delete(ctx, "k")
	s.Purge(ctx)
	if got := ev.list(); len(got) != 0 {
		t.Fatalf("events %v; want none: the caller's context ended", got)
	}
	s.Set(ctx, "k", entryAt(user{"bad", 1}, time.Minute, time.Minute))
	got := ev.list()
	if len(got) != 1 {
		t.Fatalf("events %v; want one, the codec's", got)
	}
	if e := got[0]; e.Type != CacheStoreFailed || e.Key != "k" || !errors.Is(e.Err, errMarshal) {
		t.Errorf("event %+v; want %s of key k with the codec's error", e, CacheStoreFailed)
	}
}
