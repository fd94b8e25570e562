package cache

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"reflect"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
	"weak"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/lru"
	"github.com/f0b5b96b/resilience/telemetry"
)

// The events of the cache, given to [Config.Observer]. Each sets Name (the
// cache's Name) and Key (the call's key); the others set the fields below.
const (
	// EventHit: a call got a fresh value, or a cached error (Err), from
	// the store.
	EventHit telemetry.Type = "cache.hit"
	// EventMiss: a call found no fresh entry and started a load.
	EventMiss telemetry.Type = "cache.miss"
	// EventCoalesced: a call found no fresh entry and waits for the load
	// another call started.
	EventCoalesced telemetry.Type = "cache.coalesced"
	// EventStale: a call got a stale value: Elapsed is how long past its
	// TTL the value is; Err the failed load's error (StaleIfError), nil
	// for StaleWhileRevalidate.
	EventStale telemetry.Type = "cache.stale"
	// EventEvicted: the in-memory store evicted the entry of Key to stay
	// within MaxEntries or MaxBytes; a telemetry.Slog writes it at Warn.
	EventEvicted telemetry.Type = "cache.evicted"
	// EventRefreshFailed: a background refresh failed (Err); the stale
	// value stays.
	EventRefreshFailed telemetry.Type = "cache.refresh_failed"
)

// ErrLoadPanicked is the error that a background refresh whose load
// panicked reports in its [EventRefreshFailed] event. A load that callers
// wait for panics in each of them instead.
var ErrLoadPanicked = errors.New("cache: load panicked")

// PanicError is the value each caller waiting for a load that panicked
// panics with (the caller that ran the load itself included): the value
// the load panicked with, and the stack of the load where it panicked,
// which the callers' own stacks do not show. Its Error includes the
// stack, so that a panic that is not recovered prints it. errors.Unwrap
// gives Value if it is an error (errors.Is and errors.As reach it), and
// errors.Is(err, [ErrLoadPanicked]) is true.
type PanicError struct {
	// Value is what the load panicked with.
	Value any
	// Stack is the stack of the load's goroutine at the panic, as
	// runtime/debug.Stack formats it.
	Stack []byte
}

// Error returns "cache: load panicked: " and Value, then the stack.
func (p *PanicError) Error() string {
	return fmt.Sprintf("cache: load panicked: %v\n\n%s", p.Value, p.Stack)
}

// Unwrap returns Value if it is an error, nil otherwise.
func (p *PanicError) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// Is reports whether target is [ErrLoadPanicked].
func (p *PanicError) Is(target error) bool { return target == ErrLoadPanicked }

// Cache is a read-through cache of values of type T by string key, with
// coalesced misses, stale-while-revalidate, stale-if-error and negative
// caching (see the package documentation). It is safe for simultaneous
// use by multiple goroutines. Make one with [New].
type Cache[T any] struct {
	ttl, negTTL, swr, sie, keep, loadTimeout time.Duration
	maxEntries                               int64
	maxBytes                                 int64
	maxRefreshes                             int64
	name, layer                              string
	clock                                    clock.Clock
	key                                      func(context.Context) string // nil: KeyOf
	size                                     func(T) int64
	negIf, staleIf                           func(error) bool
	obs                                      telemetry.Observer
	store                                    Store[T] // nil: the in-memory store in the shards
	shards                                   []shard[T]
	tomb                                     *record[T] // a removed key's slot in a table
	mask                                     uint64
	seed                                     maphash.Seed
	refreshing                               atomic.Int64
	count                                    atomic.Int64 // records in all shards' tables
	hits                                     [hitStripes]stripe
}

// hitStripes is the number of counters hits are spread over, so that
// hits on several cores do not all write one cache line.
const (
	hitStripesLog = 3
	hitStripes    = 1 << hitStripesLog
)

type stripe struct {
	n atomic.Uint64
	_ [56]byte
}

// countHit counts a hit on a stripe picked by the address of a variable
// on the calling goroutine's stack: goroutines (whose stacks lie apart)
// mostly count on stripes of their own, at the cost of a multiplication.
// Any stripe is correct; the pick only spreads the writes.
func (c *Cache[T]) countHit() {
	var here byte
	p := uint64(uintptr(unsafe.Pointer(&here)))
	c.hits[(p>>10)*0x9e3779b97f4a7c15>>(64-hitStripesLog)].n.Add(1)
}

// shard is a part of the keys: their in-memory entries, their loads in
// flight, and counters. Its table is read without the lock (a hit);
// everything else, and every write of the table, is under mu.
type shard[T any] struct {
	mu      sync.Mutex
	table   atomic.Pointer[table[T]] // nil: empty
	list    lru.List[string, *record[T]]
	live    int // records in table
	bytes   int64
	flights map[string]*flight[T]

	misses, coalesced, stale, evictions, refreshes, refreshFailed atomic.Uint64

	_ [64]byte
}

// record is an entry of the in-memory store. Everything but fresh, used
// and le is written before the record is published in a table, and never
// after: a hit reads them without a lock. fresh is true until a timer of
// the cache's clock, armed when the entry is stored, fires at its Expires,
// or until the record leaves the store: a hit reads the flag, not the
// clock. used is set by a hit and cleared when the record gets its second
// chance at the back of the recency list. A record is never reused: a new
// value of the key gets a new record.
type record[T any] struct {
	key   string
	hash  uint64 // maphash of key under the cache's seed
	e     Entry[T]
	fresh atomic.Bool
	used  atomic.Bool
	timer clock.Timer
	le    lru.Entry[string, *record[T]] // on the shard's list; Value is the record; under mu
}

// flight is one load in progress. v, err, negative and panicked are
// written before done is closed and read after.
type flight[T any] struct {
	done     chan struct{}
	v        T
	err      error
	negative bool // err was stored as a negative entry
	panicked bool
	panicVal any  // a *PanicError, or errGoexit
	detached bool // Invalidate or Purge: do not store the result (under the shard's lock)
}

// shardsFor is the number of shards of a cache: one (one second-chance list) for
// small or byte-bounded in-memory caches, 16 otherwise.
func shardsFor(c Config) int {
	if c.Store == nil && (c.MaxEntries < 1024 || c.MaxBytes > 0) {
		return 1
	}
	return 16
}

// New returns a cache whose values are fresh for ttl, configured by opts
// (see [Config] for each setting and its default). It panics if ttl <= 0,
// if an option is nil, if [WithSize] or [WithStore] was given for another
// type than T, and with the message of [Config.Validate] if the
// configuration is invalid.
func New[T any](ttl time.Duration, opts ...Option) *Cache[T] {
	if ttl <= 0 {
		panic(fmt.Sprintf("cache: New(%s): the TTL must be > 0", ttl))
	}
	cfg := Config{TTL: ttl}
	for _, o := range opts {
		if o == nil {
			panic("cache: New option must not be nil")
		}
		o.apply(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		panic(err.Error())
	}
	c := &Cache[T]{
		ttl: cfg.TTL, negTTL: cfg.NegativeTTL, swr: cfg.StaleWhileRevalidate, sie: cfg.StaleIfError,
		loadTimeout: cfg.LoadTimeout, maxBytes: cfg.MaxBytes, maxRefreshes: int64(cfg.MaxRefreshes),
		name: cfg.Name, layer: "cache", clock: cfg.Clock, key: cfg.Key, tomb: new(record[T]),
		negIf: cfg.NegativeIf, staleIf: cfg.StaleIf, obs: cfg.Observer, seed: maphash.MakeSeed(),
	}
	c.keep = max(c.swr, c.sie)
	if c.name != "" {
		c.layer = "cache(" + c.name + ")"
	}
	if c.clock == nil {
		c.clock = clock.Real()
	}
	if c.loadTimeout == 0 {
		c.loadTimeout = DefaultLoadTimeout
	}
	if c.maxRefreshes == 0 {
		c.maxRefreshes = DefaultMaxRefreshes
	}
	if cfg.Size != nil {
		size, ok := cfg.Size.(func(T) int64)
		if !ok {
			panic(fmt.Sprintf("cache: WithSize: the size function is a %T, the cache holds %v: it must be a func(%[2]v) int64", cfg.Size, reflect.TypeFor[T]()))
		}
		c.size = size
	}
	if cfg.Store != nil {
		s, ok := cfg.Store.(Store[T])
		if !ok {
			panic(fmt.Sprintf("cache: WithStore: the store is a %T, the cache holds %v: it must be a Store[%[2]v]", cfg.Store, reflect.TypeFor[T]()))
		}
		c.store = s
	}
	if cfg.MaxEntries == 0 {
		cfg.MaxEntries = DefaultMaxEntries // before shardsFor: the default is not small
	}
	maxEntries := cfg.MaxEntries
	n := shardsFor(cfg)
	c.shards = make([]shard[T], n)
	c.mask = uint64(n - 1)
	c.maxEntries = int64(maxEntries)
	for i := range c.shards {
		c.shards[i].flights = make(map[string]*flight[T])
	}
	return c
}

// addSat returns a + b for a, b >= 0, or the longest Duration if the sum
// does not fit.
func addSat(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// shard returns the shard of key, and the hash of key that chose it.
func (c *Cache[T]) shard(key string) (*shard[T], uint64) {
	h := maphash.String(c.seed, key)
	return &c.shards[h&c.mask], h
}

// lookupLocked returns the entry of key (of hash h), marked used, if it
// is of use at now; sh.mu is held for the in-memory store. An entry past
// its Discard time is removed and not returned.
func (c *Cache[T]) lookupLocked(ctx context.Context, sh *shard[T], key string, h uint64, now time.Time) (Entry[T], bool) {
	if c.store != nil {
		e, ok := c.store.Get(ctx, key)
		if ok && !now.Before(e.Discard) {
			return Entry[T]{}, false
		}
		return e, ok
	}
	rec := sh.find(key, h)
	if rec == nil {
		return Entry[T]{}, false
	}
	if !now.Before(rec.e.Discard) {
		c.remove(sh, rec)
		return Entry[T]{}, false
	}
	rec.use()
	return rec.e, true
}

func (c *Cache[T]) lookup(ctx context.Context, sh *shard[T], key string, h uint64, now time.Time) (Entry[T], bool) {
	if c.store != nil {
		return c.lookupLocked(ctx, sh, key, h, now)
	}
	sh.mu.Lock()
	e, ok := c.lookupLocked(ctx, sh, key, h, now)
	sh.mu.Unlock()
	return e, ok
}

// use marks r used since its last second chance. It writes the flag only
// if it is clear, so that hits of a hot entry on several cores only read
// its cache line.
func (r *record[T]) use() {
	if !r.used.Load() {
		r.used.Store(true)
	}
}

// remove takes rec out of sh; sh.mu is held. A hit that found rec before
// finds it no longer fresh.
func (c *Cache[T]) remove(sh *shard[T], rec *record[T]) {
	c.count.Add(-1)
	c.unlink(sh, rec)
}

// unlink takes rec out of sh without counting it out of c.count; sh.mu is
// held.
func (c *Cache[T]) unlink(sh *shard[T], rec *record[T]) {
	rec.fresh.Store(false)
	rec.timer.Stop()
	rec.le.Remove()
	sh.del(rec, c.tomb)
	sh.bytes -= rec.e.Size
}

// hitResult is what [Cache.hit] found.
type hitResult uint8

const (
	notFound hitResult = iota // no entry of use without a load
	fresh                     // a fresh value or negative entry: returned
	staleSWR                  // a stale value within StaleWhileRevalidate: returned; refresh
)

// hit answers a call of key from the store if it can; info is the call's
// Info, nil if none.
func (c *Cache[T]) hit(ctx context.Context, key string, info *Info) (v T, r hitResult, err error) {
	sh, h := c.shard(key)
	if c.store == nil {
		// A fresh record needs no clock and no lock.
		if rec := sh.find(key, h); rec != nil && rec.fresh.Load() {
			rec.use()
			c.hitFresh(info, key, rec.e.Err)
			return rec.e.Value, fresh, rec.e.Err
		}
	}
	now := c.clock.Now()
	e, ok := c.lookup(ctx, sh, key, h, now)
	if !ok {
		return v, notFound, nil
	}
	if now.Before(e.Expires) {
		c.hitFresh(info, key, e.Err)
		return e.Value, fresh, e.Err
	}
	if e.Err == nil && now.Before(e.Expires.Add(c.swr)) {
		age := now.Sub(e.Expires)
		c.countHit()
		sh.stale.Add(1)
		if info != nil {
			*info = Info{Outcome: Hit, Stale: true, Age: age}
		}
		if c.obs != nil {
			c.obs.Observe(telemetry.Event{Type: EventStale, Name: c.name, Key: key, Elapsed: age})
		}
		return e.Value, staleSWR, nil
	}
	return v, notFound, nil
}

// hitFresh counts and reports a fresh hit.
func (c *Cache[T]) hitFresh(info *Info, key string, err error) {
	c.countHit()
	if info != nil {
		*info = Info{Outcome: Hit}
	}
	if c.obs != nil {
		c.obs.Observe(telemetry.Event{Type: EventHit, Name: c.name, Key: key, Err: err})
	}
}

// refresh starts a background load of key, unless one is in flight or
// MaxRefreshes are running.
func (c *Cache[T]) refresh(ctx context.Context, key string, load func(context.Context) (T, error)) {
	sh, h := c.shard(key)
	sh.mu.Lock()
	if sh.flights[key] != nil {
		sh.mu.Unlock()
		return
	}
	for {
		n := c.refreshing.Load()
		if n >= c.maxRefreshes {
			sh.mu.Unlock()
			return
		}
		if c.refreshing.CompareAndSwap(n, n+1) {
			break
		}
	}
	f := &flight[T]{done: make(chan struct{})}
	sh.flights[key] = f
	sh.mu.Unlock()
	sh.refreshes.Add(1)
	go c.fly(ctx, key, sh, h, f, load, true)
}

// join answers a call of key that hit found nothing for, if a load just
// stored a fresh entry (done); otherwise it returns the flight to wait
// for: one in progress (Coalesced), or a new one (Miss) that the caller
// must start with launch. A caller whose ctx is done gets ctx.Err().
func (c *Cache[T]) join(ctx context.Context, key string, info *Info) (f *flight[T], o Outcome, v T, err error, done bool) {
	if err = ctx.Err(); err != nil {
		return nil, 0, v, err, true // the caller gave up: no load starts
	}
	sh, h := c.shard(key)
	sh.mu.Lock()
	if f = sh.flights[key]; f != nil {
		sh.mu.Unlock()
		sh.coalesced.Add(1)
		if c.obs != nil {
			c.obs.Observe(telemetry.Event{Type: EventCoalesced, Name: c.name, Key: key})
		}
		return f, Coalesced, v, nil, false
	}
	// A load that ended since hit looked stored its result before it left
	// the flights, under this lock. (A Store is not asked again: it is not
	// called under the lock, and a second load is only a cost.)
	if c.store == nil {
		now := c.clock.Now()
		if e, ok := c.lookupLocked(ctx, sh, key, h, now); ok && now.Before(e.Expires) {
			sh.mu.Unlock()
			c.hitFresh(info, key, e.Err)
			return nil, Hit, e.Value, e.Err, true
		}
	}
	f = &flight[T]{done: make(chan struct{})}
	sh.flights[key] = f
	sh.mu.Unlock()
	sh.misses.Add(1)
	if c.obs != nil {
		c.obs.Observe(telemetry.Event{Type: EventMiss, Name: c.name, Key: key})
	}
	return f, Miss, v, nil, false
}

// wait waits for f, or for ctx to end, and answers the call; info is the
// call's Info, nil if none.
func (c *Cache[T]) wait(ctx context.Context, key string, info *Info, f *flight[T], o Outcome) (v T, err error) {
	select {
	case <-f.done:
	case <-ctx.Done():
		if info != nil {
			*info = Info{Outcome: o}
		}
		return v, ctx.Err()
	}
	if f.panicked {
		panic(f.panicVal)
	}
	if f.err != nil && !f.negative && c.sie > 0 && (c.staleIf == nil || c.staleIf(f.err)) {
		now := c.clock.Now()
		sh, h := c.shard(key)
		if e, ok := c.lookup(ctx, sh, key, h, now); ok && e.Err == nil && now.Before(e.Expires.Add(c.sie)) {
			if now.Before(e.Expires) {
				// A later load stored a fresh value since this one failed.
				if info != nil {
					*info = Info{Outcome: o}
				}
				return e.Value, nil
			}
			age := now.Sub(e.Expires)
			sh.stale.Add(1)
			if info != nil {
				*info = Info{Outcome: o, Stale: true, Age: age, Err: f.err}
			}
			if c.obs != nil {
				c.obs.Observe(telemetry.Event{Type: EventStale, Name: c.name, Key: key, Elapsed: age, Err: f.err})
			}
			return e.Value, nil
		}
	}
	if info != nil {
		*info = Info{Outcome: o}
	}
	return f.v, f.err
}

// launch runs the load of a call's miss. A caller whose context can end
// must be able to leave while the load goes on for the others: the load
// gets a goroutine of its own. One whose context can never end
// (ctx.Done() is nil, as for context.Background()) would wait for the
// load anyway, so it runs the load itself and saves the goroutine; a
// panic of the load then goes up from wait as it does for the waiters.
func (c *Cache[T]) launch(ctx context.Context, key string, f *flight[T], load func(context.Context) (T, error)) {
	sh, h := c.shard(key)
	if ctx.Done() == nil {
		c.fly(ctx, key, sh, h, f, load, false)
		return
	}
	go c.fly(ctx, key, sh, h, f, load, false)
}

// errGoexit is the panic value callers of a load that called
// runtime.Goexit get.
const errGoexit = "cache: the load called runtime.Goexit"

// fly runs one load and stores its result.
func (c *Cache[T]) fly(parent context.Context, key string, sh *shard[T], h uint64, f *flight[T], load func(context.Context) (T, error), refresh bool) {
	parent = context.WithoutCancel(parent)
	if cv := callOf(parent); cv != nil && cv.info != nil {
		// The caller's Info is the caller's: a cache below writes its own.
		parent = context.WithValue(parent, callCtxKey{}, &call{key: cv.key})
	}
	ctx, cancel := context.WithCancel(parent)
	var t clock.Timer
	if c.loadTimeout > 0 {
		t = c.clock.AfterFunc(c.loadTimeout, cancel)
	}
	var r result[T]
	returned := false
	defer func() {
		if !returned {
			f.panicked = true
			if v := recover(); v != nil {
				f.panicVal = &PanicError{Value: v, Stack: debug.Stack()}
			} else {
				f.panicVal = errGoexit
			}
			r = result[T]{}
		}
		if t != nil {
			t.Stop()
		}
		cancel()
		c.land(parent, key, sh, h, f, r, refresh)
	}()
	f.v, f.err = load(ctx)
	// The hooks run here too, so that a panic in one reaches the callers
	// as a panic of the load does.
	r = c.resultOf(f)
	returned = true
}

// result is what a load leaves to store.
type result[T any] struct {
	e        Entry[T]
	now      time.Time
	store    bool // e is to be stored
	tooLarge bool // a value too large to store: the older entry goes
}

// resultOf makes the entry of f's outcome, calling the Size and
// NegativeIf hooks.
func (c *Cache[T]) resultOf(f *flight[T]) (r result[T]) {
	r.now = c.clock.Now()
	switch {
	case f.err == nil:
		r.e = Entry[T]{Value: f.v, Expires: r.now.Add(c.ttl), Discard: r.now.Add(addSat(c.ttl, c.keep))}
		if c.size != nil {
			r.e.Size = c.size(f.v)
		}
		r.tooLarge = r.e.Size < 0 || c.maxBytes > 0 && r.e.Size > c.maxBytes
		r.store = !r.tooLarge
	case c.negIf != nil && c.negIf(f.err):
		f.negative = true
		r.e = Entry[T]{Err: f.err, Expires: r.now.Add(c.negTTL), Discard: r.now.Add(c.negTTL)}
		r.store = true
	}
	return r
}

// land stores r, the result of f, ends the flight and reports.
func (c *Cache[T]) land(ctx context.Context, key string, sh *shard[T], h uint64, f *flight[T], r result[T], refresh bool) {
	var evicted []string
	over := false
	if c.store != nil {
		// A Store may be slow (a network): it is called without the
		// shard's lock, before the flight ends, so that a load of the key
		// that starts after this one ends finds the result.
		sh.mu.Lock()
		detached := f.detached
		sh.mu.Unlock()
		if !detached {
			switch {
			case r.store:
				c.store.Set(ctx, key, r.e)
			case r.tooLarge:
				c.store.Delete(ctx, key)
			}
		}
	}
	sh.mu.Lock()
	if !f.detached {
		switch {
		case r.store:
			evicted, over = c.setLocked(sh, key, h, r.e, r.now)
		case r.tooLarge:
			c.deleteLocked(sh, key, h) // the stored value is older than the one returned
		}
		delete(sh.flights, key)
	}
	sh.mu.Unlock()
	if over {
		evicted = c.evictElsewhere(h, evicted)
	}
	close(f.done)
	if refresh {
		c.refreshing.Add(-1)
		if f.err != nil || f.panicked {
			sh.refreshFailed.Add(1)
			if c.obs != nil {
				err := f.err
				if f.panicked {
					err = ErrLoadPanicked
				}
				c.obs.Observe(telemetry.Event{Type: EventRefreshFailed, Name: c.name, Key: key, Err: err})
			}
		}
	}
	for _, k := range evicted {
		c.obs.Observe(telemetry.Event{Type: EventEvicted, Name: c.name, Key: k})
	}
}

// setLocked stores e under key (of hash h) and evicts what the bounds
// require from sh; it returns the keys evicted if there is an observer,
// and over if the cache still holds more than MaxEntries entries because
// sh holds no other entry than e's (see evictElsewhere).
func (c *Cache[T]) setLocked(sh *shard[T], key string, h uint64, e Entry[T], now time.Time) (evicted []string, over bool) {
	if c.store != nil {
		return nil, false // stored by land
	}
	rec := &record[T]{key: key, hash: h, e: e}
	rec.le.Value = rec
	rec.fresh.Store(true)
	// The timer reaches rec through a weak pointer: a pending timer holds
	// its function until it fires, and a cache that is dropped must not
	// keep its values alive until their TTL.
	wp := weak.Make(rec)
	rec.timer = c.clock.AfterFunc(e.Expires.Sub(now), func() {
		if r := wp.Value(); r != nil {
			r.fresh.Store(false)
		}
	})
	if old := sh.put(rec, c.tomb); old != nil {
		old.fresh.Store(false)
		old.timer.Stop()
		old.le.Remove()
		sh.bytes -= old.e.Size
	} else {
		c.count.Add(1)
	}
	sh.bytes += e.Size
	sh.list.PushFront(&rec.le)
	return c.evictLocked(sh, rec, nil)
}

// evictLocked evicts entries of sh, never keep, while the cache holds
// more than MaxEntries entries or sh more than MaxBytes bytes; sh.mu is
// held. It appends the keys evicted to evicted if there is an observer,
// and returns over if the cache still holds more than MaxEntries entries
// (sh has no other entry to evict).
//
// Eviction is second chance (CLOCK) on the recency list: a stored entry
// goes to the front, unused; a hit marks its entry used without moving it
// (a hit takes no lock); the back entry is evicted if unused, and
// otherwise loses its mark and goes to the front, at most once per entry
// held per call. The entry count is taken down by compare-and-swap, so
// that stores in several shards at once evict no more than the bound
// needs.
func (c *Cache[T]) evictLocked(sh *shard[T], keep *record[T], evicted []string) ([]string, bool) {
	chances := sh.list.Len()
	for {
		n := c.count.Load()
		over := n > c.maxEntries
		if !over && (c.maxBytes == 0 || sh.bytes <= c.maxBytes) {
			return evicted, false
		}
		back := sh.list.Back()
		if back == nil || back.Value == keep && sh.list.Len() == 1 {
			return evicted, over // keep alone fits MaxBytes: nothing else here
		}
		r := back.Value
		if r == keep || chances > 0 && r.used.Load() {
			r.used.Store(false)
			sh.list.PushFront(back)
			chances--
			continue
		}
		if !over {
			c.count.Add(-1)
		} else if !c.count.CompareAndSwap(n, n-1) {
			continue // another shard stored or removed an entry: count again
		}
		c.unlink(sh, r)
		sh.evictions.Add(1)
		if c.obs != nil {
			evicted = append(evicted, r.key)
		}
	}
}

// evictElsewhere evicts, from the shards after the one of hash h in turn,
// while the cache holds more than MaxEntries entries; it takes one shard's
// lock at a time, and none may be held. It appends the keys evicted to
// evicted if there is an observer.
func (c *Cache[T]) evictElsewhere(h uint64, evicted []string) []string {
	for i := uint64(1); i < uint64(len(c.shards)); i++ {
		sh := &c.shards[(h+i)&c.mask]
		sh.mu.Lock()
		var over bool
		evicted, over = c.evictLocked(sh, nil, evicted)
		sh.mu.Unlock()
		if !over {
			break
		}
	}
	return evicted
}

func (c *Cache[T]) deleteLocked(sh *shard[T], key string, h uint64) {
	if c.store != nil {
		return // a Store is called without the lock
	}
	if rec := sh.find(key, h); rec != nil {
		c.remove(sh, rec)
	}
}

// Policy returns c as a layer of a resilience.Policy[T], named "cache" or
// "cache(Name)". Each call's key comes from its context ([Key], or the
// function of [WithKey]); an empty key bypasses the cache, and a panic in
// the key function goes up to the caller. Otherwise the call is answered
// from the store or by one load through the rest of the chain, as the
// package documentation says; the rest of the chain then runs under a
// context of its own (see [Config.LoadTimeout]), in a goroutine of its own
// unless the caller's context can never end.
//
// The layer describes itself to resilience's Check and Bounds as of kind
// other, adding no wait: one call runs the rest of the chain at most once
// (a miss's load, or a background refresh it does not wait for), and
// waits no longer than a load bounded as the rest of the chain is, so a
// pipeline has the same bounds with the cache as without it. A Store's
// calls are not counted: a Store bounds its own.
//
// Every Policy of c shares c's entries. A hit allocates nothing, takes
// no lock, and looks up the context once (with [WithKey], twice: the
// key function, and the Info).
func (c *Cache[T]) Policy() resilience.Policy[T] {
	return describe(resilience.New(c.layer, func(ctx context.Context, next resilience.Next[T]) (T, error) {
		var key string
		var info *Info
		if c.key == nil {
			if cv := callOf(ctx); cv != nil {
				key, info = cv.key, cv.info
			}
		} else {
			key, info = c.key(ctx), infoOf(ctx)
		}
		if key == "" {
			if info != nil {
				*info = Info{}
			}
			return next.Call(ctx)
		}
		v, r, err := c.hit(ctx, key, info)
		switch r {
		case fresh:
			return v, err
		case staleSWR:
			c.refresh(ctx, key, next.Call)
			return v, err
		}
		f, o, v, err, done := c.join(ctx, key, info)
		if done {
			return v, err
		}
		if o == Miss {
			c.launch(ctx, key, f, next.Call)
		}
		return c.wait(ctx, key, info, f, o)
	}))
}

// Guard returns fn cached by c, with fn's own shape: the key of a call is
// key(a), the argument's. An empty key bypasses the cache (fn is called);
// a panic in key goes up to the caller. To cache a guarded call, give
// resilience.Guard(pipeline, fn) as fn: StaleIfError then covers the
// pipeline's failures and refusals.
//
// A hit, and a call that waits for another's load, allocate nothing; a
// hit takes no lock and looks up the context once (for an Info). A call
// that starts a load allocates the closure of fn and a, and the load. It
// panics if c, key or fn is nil, and, when called, if ctx is nil.
func Guard[A, T any](c *Cache[T], key func(A) string, fn func(context.Context, A) (T, error)) func(context.Context, A) (T, error) {
	switch {
	case c == nil:
		panic("cache: Guard cache must not be nil")
	case key == nil:
		panic("cache: Guard key must not be nil")
	case fn == nil:
		panic("cache: Guard fn must not be nil")
	}
	return func(ctx context.Context, a A) (T, error) {
		if ctx == nil {
			panic("cache: a guarded function called with a nil context (use context.Background())")
		}
		k := key(a)
		info := infoOf(ctx)
		if k == "" {
			if info != nil {
				*info = Info{}
			}
			return fn(ctx, a)
		}
		v, r, err := c.hit(ctx, k, info)
		switch r {
		case fresh:
			return v, err
		case staleSWR:
			c.refresh(ctx, k, func(ctx context.Context) (T, error) { return fn(ctx, a) })
			return v, err
		}
		f, o, v, err, done := c.join(ctx, k, info)
		if done {
			return v, err
		}
		if o == Miss {
			c.launch(ctx, k, f, func(ctx context.Context) (T, error) { return fn(ctx, a) })
		}
		return c.wait(ctx, k, info, f, o)
	}
}

// Invalidate removes the entry of key. A load of key in flight still
// answers the calls waiting for it, but its result is not stored, and the
// next call of key starts a new load. ctx goes to the Store, if there is
// one; the in-memory store does not use it. No call that starts after
// Invalidate returns gets the removed entry.
func (c *Cache[T]) Invalidate(ctx context.Context, key string) {
	sh, h := c.shard(key)
	sh.mu.Lock()
	c.deleteLocked(sh, key, h)
	if f := sh.flights[key]; f != nil {
		f.detached = true
		delete(sh.flights, key)
	}
	sh.mu.Unlock()
	if c.store != nil {
		c.store.Delete(ctx, key)
	}
}

// Purge removes every entry, as Invalidate of every key does (with a
// Store, it calls Store.Purge with ctx).
func (c *Cache[T]) Purge(ctx context.Context) {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		if c.store == nil {
			for le := sh.list.Back(); le != nil; le = sh.list.Back() {
				c.remove(sh, le.Value)
			}
			sh.clear()
		}
		for k, f := range sh.flights {
			f.detached = true
			delete(sh.flights, k)
		}
		sh.mu.Unlock()
	}
	if c.store != nil {
		c.store.Purge(ctx)
	}
}

// Stats are a cache's counts since New.
type Stats struct {
	Hits      uint64 // calls answered from the store, fresh or StaleWhileRevalidate
	Misses    uint64 // loads started for calls (refreshes not included)
	Coalesced uint64 // calls that waited for another call's load
	Stale     uint64 // stale values returned (StaleWhileRevalidate and StaleIfError)
	Evictions uint64 // entries the in-memory store evicted for its bounds
	Refreshes uint64 // background refreshes started
	// RefreshFailures counts refreshes that failed.
	RefreshFailures uint64
	// Entries and Bytes are what the in-memory store holds now (entries
	// past their use included until found); 0 with a Store.
	Entries int
	Bytes   int64
}

// Stats returns c's counts. Each is read atomically, not all at one
// instant.
func (c *Cache[T]) Stats() Stats {
	var s Stats
	for i := range c.hits {
		s.Hits += c.hits[i].n.Load()
	}
	for i := range c.shards {
		sh := &c.shards[i]
		s.Misses += sh.misses.Load()
		s.Coalesced += sh.coalesced.Load()
		s.Stale += sh.stale.Load()
		s.Evictions += sh.evictions.Load()
		s.Refreshes += sh.refreshes.Load()
		s.RefreshFailures += sh.refreshFailed.Load()
		if c.store == nil {
			sh.mu.Lock()
			s.Entries += sh.live
			s.Bytes += sh.bytes
			sh.mu.Unlock()
		}
	}
	return s
}

// String returns the layer name of c's policies, "cache" or "cache(Name)".
func (c *Cache[T]) String() string { return c.layer }
