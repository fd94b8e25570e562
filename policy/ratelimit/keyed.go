package ratelimit

import "sync"

// Keyed is a set of token buckets, one per key (a client, a tenant, a
// remote address), all with the same configuration. It tracks at most
// [Config.MaxKeys] keys (8192 by default): when a new key would exceed
// that, the least recently used key is forgotten, and if it comes back it
// starts again with a full bucket. Memory is bounded and each call costs
// O(1) whatever the keys, so keys may come from untrusted input (Go maps
// hash with a per-process random seed); size MaxKeys above the number of
// keys active within a refill period, or a client that cycles through more
// keys than that regains its burst.
//
// A Keyed is safe for simultaneous use by multiple goroutines. Create one
// with [NewKeyed]; the zero Keyed is not usable.
type Keyed[K comparable] struct {
	p       *params
	maxKeys int

	mu   sync.Mutex
	keys map[K]*entry[K]
	lru  entry[K] // sentinel of a ring: lru.next is the most recently used
}

// entry is one tracked key: its bucket and its place in the LRU ring.
type entry[K comparable] struct {
	lim        Limiter
	key        K
	prev, next *entry[K]
}

// NewKeyed returns a Keyed whose buckets each refill at rate events per
// second up to burst, as [New] describes, configured by opts
// ([WithMaxKeys] bounds the keys tracked). It panics on an invalid
// configuration, as New does.
func NewKeyed[K comparable](rate float64, burst int, opts ...Option) *Keyed[K] {
	cfg := build(rate, burst, opts)
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
// the key: hold it for one request, not across requests.
func (k *Keyed[K]) Limiter(key K) *Limiter {
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.keys[key]
	if e != nil {
		e.unlink()
	} else {
		if len(k.keys) >= k.maxKeys {
			old := k.lru.prev
			old.unlink()
			delete(k.keys, old.key)
		}
		e = &entry[K]{lim: Limiter{p: k.p}, key: key}
		k.keys[key] = e
	}
	// Link e as the most recently used.
	e.prev, e.next = &k.lru, k.lru.next
	e.next.prev, k.lru.next = e, e
	return &e.lim
}

func (e *entry[K]) unlink() {
	e.prev.next, e.next.prev = e.next, e.prev
}

// Len returns the number of keys tracked now, at most [Config.MaxKeys].
func (k *Keyed[K]) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.keys)
}
