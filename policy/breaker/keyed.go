package breaker

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"unsafe"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/internal/lru"
	"github.com/f0b5b96b/resilience/telemetry"
)

// defaultMaxKeys is the MaxKeys of a Keyed when Config.MaxKeys is 0.
const defaultMaxKeys = 8192

// Keyed is a set of breakers, one per key (a host, an endpoint, a tenant),
// all made from one configuration: a key's breaker is made, closed, the
// first time the key is used. Each breaker is a [Breaker] like one from
// [New], with its own state and counts; the configuration (and its
// OnStateChange callback and Observer) is shared. Every Transition, every
// event and every Stats of a key's breaker carries the key (as a string:
// the key itself for a string key, else fmt.Sprint of it, made once when
// the breaker is), and its Name is Config.Name.
//
// A Keyed tracks at most [Config.MaxKeys] keys (8192 by default). To make
// room for a new key it forgets one, in this order:
//
//  1. the least recently used key whose breaker is closed (and not forced):
//     it is forgotten silently, with its counts, as a rate limiter's key
//     starts full again; if it comes back, its breaker starts closed with
//     zero counts;
//  2. only when no tracked breaker is closed (every one is open, half-open
//     or forced), the least recently used key of all: its state is lost —
//     if it comes back, it starts closed — so the eviction is reported,
//     never silent: an event [EventEvicted] (with the key and
//     the state it was in) to the Observer, and EvictedNotClosed in
//     [Keyed.Stats].
//
// So an open breaker keeps shielding its dependency for as long as there
// is a closed breaker to forget instead, and a flood of new keys can
// displace open breakers only when every tracked breaker is open. "Least
// recently used" counts uses through [Keyed.Breaker] (and the policy) and
// changes of state between closed and not closed. Every call costs O(1)
// whatever the keys: the Keyed keeps the closed breakers and the others on
// two recency lists, and a breaker that closes or stops being closed moves
// itself (taking the Keyed's lock once, in the transition).
//
// Keys may come from untrusted input (Go maps hash with a per-process
// random seed), with the caveats of ratelimit.Keyed: MaxKeys bounds the
// number of keys, not their size (bound the size of keys taken from
// untrusted input), and whoever can make new keys can push out the least
// recently used ones. A key that is not equal to itself (a float NaN, or a
// value holding one) shares one breaker with every such key.
//
// A Keyed is safe for simultaneous use by multiple goroutines. Create one
// with [NewKeyed]; the zero Keyed is not usable. Finding a key's breaker
// takes the Keyed's lock (a map lookup and a list move) and, for a new
// key, allocates its breaker. The breakers share their configuration, so
// a key holds about 340 bytes, its breaker and its map entry included,
// plus the key's own bytes (and a breaker's grown shards, if its key's
// calls collide on it; see [Breaker]).
type Keyed[K comparable] struct {
	cfg       *settings
	maxKeys   int
	keyString func(K) string

	mu               sync.Mutex
	index            lru.Index[K, Breaker]
	closed           lru.List[K, Breaker] // closed and not forced at their last use: forgotten first
	others           lru.List[K, Breaker] // open, half-open or forced at their last use
	evicted          uint64               // keys forgotten
	evictedNotClosed uint64               // of those, breakers not closed (or forced)
}

// NewKeyed returns an empty Keyed whose breakers are configured by opts, as
// [New] configures one; [WithMaxKeys] bounds the keys it tracks. It panics
// if an option is nil or the configuration is invalid, with the message of
// [Config.Validate].
func NewKeyed[K comparable](opts ...Option) *Keyed[K] {
	c := build("NewKeyed", opts)
	k := &Keyed[K]{cfg: newSettings(c), maxKeys: c.MaxKeys, keyString: keyString[K]()}
	if k.maxKeys == 0 {
		k.maxKeys = defaultMaxKeys
	}
	k.cfg.regroup = k.regroup
	return k
}

// regroup moves the entry of b, whose breaker has just closed or stopped
// being closed (a transition, or ForceOpen, ForceClosed, Reset), to the
// front of the list for its state, if its key is still tracked: a change
// of state counts as a use. It is called with b's lock held, and takes the
// Keyed's; no one takes a breaker's lock with the Keyed's held.
func (k *Keyed[K]) regroup(b *Breaker) {
	e := entryOf[K](b)
	k.mu.Lock()
	if e.List() != nil {
		k.listFor(b).PushFront(e)
	}
	k.mu.Unlock()
}

// entryOf returns the entry whose Value is b, a breaker of a Keyed[K]:
// Value is the first field of an lru.Entry, so the two share an address
// (TestKeyedEntryOf checks it).
func entryOf[K comparable](b *Breaker) *lru.Entry[K, Breaker] {
	return (*lru.Entry[K, Breaker])(unsafe.Pointer(b))
}

// WithMaxKeys sets Config.MaxKeys: the most keys a [Keyed] tracks (without
// it, 8192). It panics if n < 1.
func WithMaxKeys(n int) Option {
	inRange("WithMaxKeys", n >= 1, n, "the keys must be >= 1; leave the option out for the default, 8192")
	return option(func(c *Config) { c.MaxKeys = n })
}

// keyString returns how keys of type K are said in events: a string key
// as it is, any other with fmt.Sprint.
func keyString[K comparable]() func(K) string {
	if _, ok := any(*new(K)).(string); ok {
		return func(k K) string { return any(k).(string) }
	}
	return func(k K) string { return fmt.Sprint(k) }
}

// Breaker returns key's breaker, making it (closed) if key is not tracked,
// and tracks key as the most recently used; if that makes more than
// MaxKeys keys, it forgets one first (see [Keyed]). Use the breaker for
// one call or request (Allow and its Permit, or a Policy): it stays usable
// after its key is forgotten, but no longer counts for the key.
//
// If K is an interface type and key holds a value that is not comparable
// (a slice, a map, a func), Breaker panics, as a map lookup of such a key
// does, and the Keyed stays usable for other keys.
func (k *Keyed[K]) Breaker(key K) *Breaker {
	b, gone := k.track(key)
	if gone != nil {
		k.reportEviction(gone)
	}
	return b
}

// track is Breaker under the Keyed's lock: it returns key's breaker and,
// if tracking key forgot a breaker that was not closed, that one. The
// lock is released by a defer, since looking an uncomparable key up
// panics while it is held.
func (k *Keyed[K]) track(key K) (b, gone *Breaker) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.index.Get(key)
	if e == nil {
		if k.index.Len() >= k.maxKeys {
			gone = k.evictLocked()
		}
		e = new(lru.Entry[K, Breaker])
		e.Value.init(k.cfg, k.keyString(key))
		k.index.Add(key, e)
	}
	k.listFor(&e.Value).PushFront(e)
	return &e.Value, gone
}

// notClosed reports whether b is open, half-open or forced, as its state
// word says (an open breaker whose cooldown has passed counts as open).
func notClosed(b *Breaker) bool {
	w := b.word.Load()
	return wordState(w) != Closed || wordForced(w)
}

// listFor returns the list for b in its state now.
func (k *Keyed[K]) listFor(b *Breaker) *lru.List[K, Breaker] {
	if notClosed(b) {
		return &k.others
	}
	return &k.closed
}

// evictLocked forgets one key: the least recently used whose breaker is
// closed, else the least recently used of all. It returns the breaker
// forgotten if it was not closed, nil otherwise.
//
// The lists follow the breakers' states (regroup), but a transition's
// move waits for the Keyed's lock, held here: a breaker found on the
// closed list that is no longer closed is moved now, as regroup would.
func (k *Keyed[K]) evictLocked() *Breaker {
	for e := k.closed.Back(); e != nil; e = k.closed.Back() {
		if !notClosed(&e.Value) {
			k.forgetLocked(e)
			return nil
		}
		k.others.PushFront(e)
	}
	e := k.others.Back()
	k.forgetLocked(e)
	k.evictedNotClosed++
	return &e.Value
}

// forgetLocked stops tracking e.
func (k *Keyed[K]) forgetLocked(e *lru.Entry[K, Breaker]) {
	e.Remove()
	k.index.Delete(e)
	k.evicted++
}

// reportEviction reports the forgetting of b, which was not closed, to the
// observer.
func (k *Keyed[K]) reportEviction(b *Breaker) {
	if o := k.cfg.obs; o != nil {
		w := b.word.Load()
		o.Observe(telemetry.Event{Type: EventEvicted, Name: k.cfg.name, Key: b.key, From: wordState(w).String()})
	}
}

// KeyedStats is a snapshot of a [Keyed], from [Keyed.Stats].
type KeyedStats struct {
	Keys    int // keys tracked now, at most MaxKeys
	MaxKeys int // the bound (Config.MaxKeys, or its default)
	// Evicted is the number of keys forgotten to make room for new ones
	// since the Keyed was made; it only grows.
	Evicted uint64
	// EvictedNotClosed is the part of Evicted whose breakers were open,
	// half-open or forced when forgotten (each also reported as a
	// breaker.evicted event): their state was lost.
	EvictedNotClosed uint64
}

// Stats returns a snapshot of k, taken under its lock. It allocates
// nothing.
func (k *Keyed[K]) Stats() KeyedStats {
	k.mu.Lock()
	defer k.mu.Unlock()
	return KeyedStats{Keys: k.index.Len(), MaxKeys: k.maxKeys, Evicted: k.evicted, EvictedNotClosed: k.evictedNotClosed}
}

// Len returns the number of keys tracked now, at most MaxKeys.
func (k *Keyed[K]) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.index.Len()
}

// All returns an iterator over the tracked keys and their breakers, as
// they were when iteration began: first those not closed at their last use
// (open, half-open, forced), then the closed ones, each group most
// recently used first. It does not change which keys are recently used;
// read each breaker's state with its State or Stats. It takes the Keyed's
// lock only to copy the list, not while yielding.
func (k *Keyed[K]) All() iter.Seq2[K, *Breaker] {
	return func(yield func(K, *Breaker) bool) {
		k.mu.Lock()
		es := make([]*lru.Entry[K, Breaker], 0, k.index.Len())
		for e := range k.others.All {
			es = append(es, e)
		}
		for e := range k.closed.All {
			es = append(es, e)
		}
		k.mu.Unlock()
		for _, e := range es {
			if !yield(e.Key(), &e.Value) {
				return
			}
		}
	}
}

// KeyedPolicy returns k as a resilience.Policy[T], a layer named "breaker"
// or "breaker(name)" that sends each call through the breaker of the key
// that key returns for the call's context (k.Breaker(key(ctx))), as
// [Policy] sends calls through one breaker: the same outcomes, panics and
// costs, plus the Keyed's lock to find the breaker. Put the key in the
// context (context.WithValue) and read it back in key, or derive it from
// what the context carries (resiliencehttp.HostBreaker keys by the
// request's host).
//
// If ctx is already done the call returns ctx.Err() at once, asking no
// breaker (key is not called). KeyedPolicy panics if k or key is nil.
func KeyedPolicy[T any, K comparable](k *Keyed[K], key func(ctx context.Context) K) resilience.Policy[T] {
	if k == nil {
		panic("breaker: KeyedPolicy Keyed must not be nil")
	}
	if key == nil {
		panic("breaker: KeyedPolicy key must not be nil")
	}
	return describe(resilience.New(k.cfg.layer(), func(ctx context.Context, next resilience.Next[T]) (v T, err error) {
		if err = ctx.Err(); err != nil {
			return v, err // the caller gave up: no breaker is asked
		}
		return through(ctx, k.Breaker(key(ctx)), next)
	}))
}

// through runs the rest of the chain through breaker b, as the closure of
// Policy does. Policy keeps its own copy of this code rather than calling
// through: the call would add a fifth to its closed path (180 to 200
// instructions a Do, measured with cachegrind).
func through[T any](ctx context.Context, b *Breaker, next resilience.Next[T]) (v T, err error) {
	w := b.word.Load()
	if wordState(w) != Closed || b.measure {
		if err = b.refuseFresh(w); err != nil {
			return v, err
		}
		return policySlow(ctx, b, next)
	}
	returned := false
	defer func() {
		if !returned {
			b.panicked(w)
		}
	}()
	v, err = next.Call(ctx)
	returned = true
	if err != nil {
		b.completeErr(ctx, admission{word: w}, err)
	} else if b.timed || !b.countSuccess(w) {
		b.finishSlow(w, 0, 0, false, Success, nil)
	}
	return v, err
}
