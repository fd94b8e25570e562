package resilienceredis

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/cache"
	"github.com/f0b5b96b/resilience/telemetry"
	"github.com/google/go-cmp/cmp"
)

type user struct {
	Name string
	Age  int
}

// events collects the store's events.
type events struct {
	mu  sync.Mutex
	got []telemetry.Event
}

func (e *events) Observe(ev telemetry.Event) {
	e.mu.Lock()
	e.got = append(e.got, ev)
	e.mu.Unlock()
}

func (e *events) list() []telemetry.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]telemetry.Event(nil), e.got...)
}

func newUserStore(t *testing.T, prefix string, opts ...CacheStoreOption) *CacheStore[user] {
	t.Helper()
	return NewCacheStore[user](newClient(t), "users", nil, append([]CacheStoreOption{WithCachePrefix(prefix)}, opts...)...)
}

// entryAt returns an entry stored now, fresh for ttl, kept for keep.
func entryAt(v user, ttl, keep time.Duration) cache.Entry[user] {
	now := time.Now()
	return cache.Entry[user]{Value: v, Expires: now.Add(ttl), Discard: now.Add(keep), Size: 7}
}

var cmpEntry = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

func TestCacheStoreRoundTrip(t *testing.T) {
	ctx := ctxFor(t)
	s := newUserStore(t, testPrefix(t))
	if _, ok := s.Get(ctx, "u1"); ok {
		t.Fatal("Get of a key never set: found an entry")
	}
	want := entryAt(user{"Ada", 36}, time.Minute, 2*time.Minute)
	s.Set(ctx, "u1", want)
	got, ok := s.Get(ctx, "u1")
	if !ok {
		t.Fatal("Get after Set: no entry")
	}
	if diff := cmp.Diff(want, got, cmpEntry); diff != "" {
		t.Errorf("entry mismatch (-want +got):\n%s", diff)
	}
}

func TestCacheStoreNegativeEntry(t *testing.T) {
	ctx := ctxFor(t)
	s := newUserStore(t, testPrefix(t))
	sentinel := errors.New("user not found")
	e := entryAt(user{}, time.Minute, time.Minute)
	e.Err = sentinel
	s.Set(ctx, "u2", e)
	got, ok := s.Get(ctx, "u2")
	if !ok {
		t.Fatal("Get of a negative entry: no entry")
	}
	var se *StoredError
	if !errors.As(got.Err, &se) || se.Msg != "user not found" {
		t.Fatalf("Get: Err = %#v, want a *StoredError with the text %q", got.Err, "user not found")
	}
	if errors.Is(got.Err, sentinel) {
		t.Error("a stored error matches the original sentinel; the docs say it does not")
	}
	if diff := cmp.Diff(e.Expires, got.Expires, cmpEntry); diff != "" {
		t.Errorf("Expires mismatch (-want +got):\n%s", diff)
	}
}

func TestCacheStoreTTLIsDiscard(t *testing.T) {
	ctx := ctxFor(t)
	prefix := testPrefix(t)
	s := newUserStore(t, prefix)
	keep := 90 * time.Second
	before := time.Now()
	s.Set(ctx, "u3", entryAt(user{"Bo", 1}, 10*time.Second, keep))
	ttl, err := newClient(t).PTTL(ctx, prefix+"cache:{users}:0:u3").Result()
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(before)
	if ttl > keep+time.Millisecond || ttl < keep-elapsed-time.Second {
		t.Errorf("PTTL = %v, want within [%v, %v]", ttl, keep-elapsed-time.Second, keep)
	}
	// An entry already past its Discard time is not stored, and removes
	// the key's entry.
	s.Set(ctx, "u3", cache.Entry[user]{Value: user{"old", 0}, Expires: before.Add(-time.Second), Discard: before.Add(-time.Second)})
	if _, ok := s.Get(ctx, "u3"); ok {
		t.Error("Get after a Set of an entry past its Discard: found an entry")
	}
}

func TestCacheStoreDelete(t *testing.T) {
	ctx := ctxFor(t)
	s := newUserStore(t, testPrefix(t))
	s.Set(ctx, "a", entryAt(user{"A", 1}, time.Minute, time.Minute))
	s.Set(ctx, "b", entryAt(user{"B", 2}, time.Minute, time.Minute))
	s.Delete(ctx, "a")
	if _, ok := s.Get(ctx, "a"); ok {
		t.Error("Get after Delete: found an entry")
	}
	if _, ok := s.Get(ctx, "b"); !ok {
		t.Error("Delete of a removed b too")
	}
}

func TestCacheStorePurge(t *testing.T) {
	ctx := ctxFor(t)
	prefix := testPrefix(t)
	s := newUserStore(t, prefix)
	other := newUserStore(t, prefix) // another instance of the same store
	for _, k := range []string{"a", "b", "c"} {
		s.Set(ctx, k, entryAt(user{k, 1}, time.Minute, time.Minute))
	}
	other.Purge(ctx)
	for _, k := range []string{"a", "b", "c"} {
		if _, ok := s.Get(ctx, k); ok {
			t.Errorf("Get(%q) after Purge: found an entry", k)
		}
	}
	s.Set(ctx, "a", entryAt(user{"new", 2}, time.Minute, time.Minute))
	if got, ok := other.Get(ctx, "a"); !ok || got.Value.Name != "new" {
		t.Errorf("Get after Purge and Set = %v, %v; want the new entry", got.Value, ok)
	}
}

func TestCacheStoreGarbageIsMiss(t *testing.T) {
	ctx := ctxFor(t)
	prefix := testPrefix(t)
	ev := &events{}
	s := newUserStore(t, prefix, WithCacheObserver(ev))
	rdb := newClient(t)
	good, err := s.encode(entryAt(user{"A", 1}, time.Minute, 2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	bad := append(append([]byte(nil), good[:envHeader]...), "{not json"...)
	for name, v := range map[string]string{
		"garbage":   "hello",
		"empty":     "",
		"version":   "\x09" + string(good[1:]),
		"body":      string(bad),
		"bad times": string(good[:2]) + string(good[10:18]) + string(good[2:10]) + string(good[18:]),
	} {
		key := prefix + "cache:{users}:0:" + name
		if err := rdb.Set(ctx, key, v, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		if e, ok := s.Get(ctx, name); ok {
			t.Errorf("%s: Get = %+v, true; want a miss", name, e)
		}
		if n, err := rdb.Exists(ctx, key).Result(); err != nil || n != 0 {
			t.Errorf("%s: key still there after Get (EXISTS = %d, %v)", name, n, err)
		}
	}
	got := ev.list()
	if len(got) != 5 {
		t.Fatalf("got %d events, want 5: %v", len(got), got)
	}
	for _, e := range got {
		if e.Type != CacheStoreFailed || !errors.Is(e.Err, ErrBadEntry) {
			t.Errorf("event %+v: want %s with ErrBadEntry", e, CacheStoreFailed)
		}
	}
}

// silentServer accepts connections and never answers.
func silentServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}

func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestCacheStoreUnreachable(t *testing.T) {
	const timeout = 50 * time.Millisecond
	for name, addr := range map[string]string{"closed port": closedPort(t), "silent server": silentServer(t)} {
		t.Run(name, func(t *testing.T) {
			ctx := ctxFor(t)
			ev := &events{}
			s := NewCacheStore[user](clientOf(t, addr), "users", nil, WithCachePrefix(testPrefix(t)),
				WithCacheTimeout(timeout), WithCacheObserver(ev))
			t.Cleanup(s.r.wg.Wait) // the round trips left behind end with the client's own timeouts
			ops := map[string]func(){
				"Get": func() {
					if _, ok := s.Get(ctx, "k"); ok {
						t.Error("Get: found an entry")
					}
				},
				"Set":    func() { s.Set(ctx, "k", entryAt(user{"A", 1}, time.Minute, time.Minute)) },
				"Delete": func() { s.Delete(ctx, "k") },
				"Purge":  func() { s.Purge(ctx) },
			}
			for op, f := range ops {
				start := time.Now()
				f()
				if d := time.Since(start); d > timeout+400*time.Millisecond {
					t.Errorf("%s took %v, want about the Timeout %v", op, d, timeout)
				}
			}
			got := ev.list()
			if len(got) != len(ops) {
				t.Fatalf("got %d events, want %d: %v", len(got), len(ops), got)
			}
			for _, e := range got {
				if e.Type != CacheStoreFailed || e.Name != "users" || e.Err == nil {
					t.Errorf("event %+v: want %s of users with an error", e, CacheStoreFailed)
				}
			}
		})
	}
}

func TestCacheStoreSharedByTwoCaches(t *testing.T) {
	ctx := ctxFor(t)
	prefix := testPrefix(t)
	a := cache.New[user](time.Minute, cache.WithStore[user](newUserStore(t, prefix)))
	b := cache.New[user](time.Minute, cache.WithStore[user](newUserStore(t, prefix)))
	var loads atomic.Int32
	load := func(context.Context) (user, error) { loads.Add(1); return user{"Ada", 36}, nil }
	kctx := cache.Key(ctx, "u1")
	if v, err := a.Policy().Do(kctx, load); err != nil || v.Name != "Ada" {
		t.Fatalf("a: %v, %v", v, err)
	}
	if v, err := b.Policy().Do(kctx, load); err != nil || v.Name != "Ada" {
		t.Fatalf("b: %v, %v", v, err)
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("loads = %d, want 1: b did not see a's value", n)
	}
	b.Purge(ctx)
	if _, err := a.Policy().Do(kctx, load); err != nil {
		t.Fatal(err)
	}
	if n := loads.Load(); n != 2 {
		t.Errorf("loads after b.Purge = %d, want 2: a still saw the purged value", n)
	}
}

func TestCacheStoreCoalescesPerCache(t *testing.T) {
	ctx := ctxFor(t)
	prefix := testPrefix(t)
	store := newUserStore(t, prefix)
	caches := []*cache.Cache[user]{
		cache.New[user](time.Minute, cache.WithStore[user](store)),
		cache.New[user](time.Minute, cache.WithStore[user](store)),
	}
	release := make(chan struct{})
	var loads atomic.Int32
	load := func(context.Context) (user, error) {
		loads.Add(1)
		<-release
		return user{"Ada", 36}, nil
	}
	kctx := cache.Key(ctx, "u1")
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for _, c := range caches {
		for range 10 {
			wg.Go(func() {
				v, err := c.Policy().Do(kctx, load)
				if err == nil && v.Name != "Ada" {
					err = errors.New("wrong value " + v.Name)
				}
				errs <- err
			})
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for caches[0].Stats().Coalesced+caches[1].Stats().Coalesced < 18 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := loads.Load(); n != 2 {
		t.Errorf("loads = %d, want 2 (one per cache)", n)
	}
	for i, c := range caches {
		if st := c.Stats(); st.Misses != 1 || st.Coalesced != 9 {
			t.Errorf("cache %d: Misses %d, Coalesced %d; want 1 and 9", i, st.Misses, st.Coalesced)
		}
	}
	if e, ok := store.Get(ctx, "u1"); !ok || e.Value.Name != "Ada" {
		t.Errorf("store after the loads: %+v, %v", e, ok)
	}
}

func TestNewCacheStorePanics(t *testing.T) {
	rdb := newClient(t)
	for name, f := range map[string]func(){
		"empty name":    func() { NewCacheStore[int](rdb, "", nil) },
		"brace in name": func() { NewCacheStore[int](rdb, "a{b", nil) },
		"prefix":        func() { NewCacheStore[int](rdb, "a", nil, WithCachePrefix("x}")) },
		"timeout":       func() { NewCacheStore[int](rdb, "a", nil, WithCacheTimeout(-1)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
