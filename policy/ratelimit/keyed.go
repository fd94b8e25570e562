package ratelimit

import "sync"

// Keyed is a set of token buckets, one per key (a client, a tenant, a
// remote address), all with the same configuration. It tracks at most
// [Config.MaxKeys] keys (8192 by default): when a new key would exceed
// that, the least recently used key is forgotten, and if it comes back it
// starts again with a full bucket. Each call costs O(1) whatever the keys,
// so keys may come from untrusted input (Go maps hash with a per-process
// random seed), with two caveats:
//
//   - MaxKeys bounds the number of keys, not their size: each tracked key
//     is kept as it is (a long string whole), so memory is MaxKeys times
//     the largest key plus a small bucket each. Bound the size of keys
//     taken from untrusted input (truncate or hash them) before use.
//   - Whoever can make new keys can evict others' buckets: a client that
//     sends many distinct keys pushes out the least recently used ones,
//     other clients' included, and those start again full — each regains
//     its burst. Size MaxKeys above the number of keys active within a
//     refill period (Burst/Rate), and key on what a client cannot vary at
//     will (an authenticated identity rather than a header it sets).
//
// A key that is not equal to itself (a float NaN, or an interface, array or
// struct holding one) could never be found again in a map; all such keys
// share one bucket, tracked and evicted like any other key's.
//
// A Keyed is safe for simultaneous use by multiple goroutines. Create one
// with [NewKeyed]; the zero Keyed is not usable.
type Keyed[K comparable] struct {
	p       *params
	maxKeys int

	mu   sync.Mutex
	keys map[K]*entry[K] // every tracked key equal to itself
	nan  *entry[K]       // the bucket shared by keys not equal to themselves, if tracked
	n    int             // entries in the ring: len(keys), plus 1 for nan
	lru  entry[K]        // sentinel of a ring: lru.next is the most recently used
}

// entry is one tracked key: its bucket and its place in the LRU ring.
type entry[K comparable] struct {
	lim        Limiter
	key        K
	prev, next *entry[K]
}

// NewKeyed returns a Keyed whose buckets each refill at rate events per
// second up to burst, as [New] describes, configured by opts as New is
// ([WithMaxKeys] bounds the keys tracked). It panics on an invalid
// configuration, as New does. In the worst case, more distinct keys in a
// cycle than MaxKeys, every key is evicted before it comes back, so the
// limit does not hold at all (with MaxKeys 4 and 6 keys in turn, 160 000
// of 160 000 calls are allowed).
func NewKeyed[K comparable](rate float64, burst int, opts ...Option) *Keyed[K] {
	cfg := build("NewKeyed", rate, burst, opts)
	k := &Keyed[K]{p: newParams(cfg), maxKeys: cfg.MaxKeys, keys: make(map[K]*entry[K])}
	if k.maxKeys == 0 {
		k.maxKeys = defaultMaxKeys
	}
	k.lru.prev, k.lru.next = &k.lru, &k.lru
	return k
}

// Allow reports whether one event for key may happen now, and takes its
// token if so; it is Limiter(key).Allow().
func (k *Keyed[K]) Allow(key K) bool { return k.Limiter(key).Allow() }

// Limiter returns key's bucket, tracking key as the most recently used
// (and forgetting the least recently used key if the set is full). Use it
// for any Limiter method: AllowN, Wait, or a Policy for one call. The
// Limiter stays usable after its key is forgotten, but no longer counts for
// the key: hold it for one request, not across requests. Its SetRate and
// SetBurst change that key's bucket alone, until the key is forgotten or
// [Keyed.SetRate] or [Keyed.SetBurst] retunes every key.
func (k *Keyed[K]) Limiter(key K) *Limiter {
	k.mu.Lock()
	defer k.mu.Unlock()
	self := key == key // false for NaN and values holding one
	var e *entry[K]
	if self {
		e = k.keys[key]
	} else {
		e = k.nan
	}
	if e != nil {
		e.unlink()
	} else {
		if k.n >= k.maxKeys {
			k.evict(k.lru.prev)
		}
		e = &entry[K]{key: key}
		e.lim.init(k.p)
		if self {
			k.keys[key] = e
		} else {
			k.nan = e
		}
		k.n++
	}
	// Link e as the most recently used.
	e.prev, e.next = &k.lru, k.lru.next
	e.next.prev, k.lru.next = e, e
	return &e.lim
}

// evict forgets the tracked entry e. It goes by the entry, not by its
// key, so that it never misses.
func (k *Keyed[K]) evict(e *entry[K]) {
	e.unlink()
	if e == k.nan {
		k.nan = nil
	} else {
		delete(k.keys, e.key)
	}
	k.n--
}

func (e *entry[K]) unlink() {
	e.prev.next, e.next.prev = e.next, e.prev
}

// SetRate sets the rate of every key's bucket, from now on: the buckets of
// the keys tracked now change as [Limiter.SetRate] changes one (each keeps
// its tokens, counted at the old rate up to this instant), and keys
// tracked from now on start full under the new rate. It replaces a rate or
// burst set on a key's Limiter (from [Keyed.Limiter]) since. It takes the
// Keyed's lock for a time proportional to the keys tracked (a microsecond
// or less each), during which other calls of the Keyed wait, and
// allocates a new bucket per key. It panics on a rate [Limiter.SetRate]
// refuses.
func (k *Keyed[K]) SetRate(rate float64) {
	noZeroRate(rate)
	k.mu.Lock()
	defer k.mu.Unlock()
	cfg := k.p.cfg
	cfg.Rate = rate
	k.retune(retune(k.p, cfg, "SetRate"))
}

// SetBurst sets the burst of every key's bucket, from now on, as
// [Keyed.SetRate] sets the rate: the buckets of the keys tracked now change
// as [Limiter.SetBurst] changes one. Like SetRate, it puts every key back
// on the Keyed's configuration: a rate or burst set on one key's Limiter
// since is replaced by the Keyed's (the rate last given to [NewKeyed] or
// [Keyed.SetRate]). It takes the lock and allocates as SetRate does. It
// panics on a burst [Limiter.SetBurst] refuses.
func (k *Keyed[K]) SetBurst(burst int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	cfg := k.p.cfg
	cfg.Burst = burst
	k.retune(retune(k.p, cfg, "SetBurst"))
}

// retune makes q the params of k and of every tracked key, at one instant.
// k.mu must be held.
func (k *Keyed[K]) retune(q *params) {
	k.p = q
	ns := q.elapsed()
	for e := k.lru.next; e != &k.lru; e = e.next {
		e.lim.mu.Lock()
		e.lim.replace(e.lim.cur.Load(), q, ns)
		e.lim.mu.Unlock()
	}
}

// Len returns the number of keys tracked now, at most [Config.MaxKeys].
func (k *Keyed[K]) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.n
}
