package cache

import (
	"context"
	"time"
)

// Entry is what a [Store] holds for one key: a value, or an error cached
// by [WithNegativeTTL], with its times.
type Entry[T any] struct {
	// Value is the value loaded; the zero T for a negative entry.
	Value T
	// Err is the cached error of a negative entry; nil for a value.
	Err error
	// Expires is when the entry stops being fresh (stored time + TTL, or
	// + NegativeTTL).
	Expires time.Time
	// Discard is when the entry stops being of any use: Expires plus the
	// longer of StaleWhileRevalidate and StaleIfError (Expires for a
	// negative entry); the stored time plus at most the longest Duration
	// (TTL plus window saturates). A Store may drop the entry after it.
	Discard time.Time
	// Size is the value's size as [WithSize]'s function measured it; 0
	// without one.
	Size int64
}

// Store holds a cache's entries, so that a shared store (a Redis, a
// process-wide map) can back one or more caches; [WithStore] gives it to
// [New]. The default is an in-memory store bounded by MaxEntries and
// MaxBytes (the entry evicted chosen by second chance, see the package
// documentation).
//
// A Store must:
//
//   - be safe for simultaneous use by multiple goroutines;
//   - return from Get only an entry that a Set stored under that key (by
//     this cache or another one sharing the store), never one that
//     Delete or Purge removed after the Set: the cache trusts Expires and
//     Discard as stored, and never returns a value past them;
//   - keep an entry until its Discard time at the latest, and may forget
//     any entry earlier (a bound, a restart): a forgotten entry is a miss;
//   - bound its own calls: Get runs in every call through the cache, Set
//     and Delete at the end of each load. The cache calls a Store without
//     holding any lock of its own, so a slow Store slows the calls that
//     use it, not the others. A Store that can fail (a network) treats a
//     failed Get as "no entry" and a failed Set or Delete as done, and
//     reports such failures itself.
//
// With a Store, coalescing is per cache: two caches (two processes)
// sharing a store may load one key at once. A load that ends while
// [Cache.Invalidate] of its key runs may store its value just after the
// Delete; the in-memory store has no such window.
//
// A Store holds values of type T as they are: a store that serialises
// them must give back an equal T.
type Store[T any] interface {
	// Get returns the entry of key and true, or false if there is none.
	// ctx is the caller's.
	Get(ctx context.Context, key string) (Entry[T], bool)
	// Set stores e under key, in place of any entry of key. ctx is the
	// load's first caller's, without its cancellation.
	Set(ctx context.Context, key string, e Entry[T])
	// Delete removes the entry of key, if any. ctx is Invalidate's, or
	// the load's as for Set.
	Delete(ctx context.Context, key string)
	// Purge removes every entry. ctx is [Cache.Purge]'s.
	Purge(ctx context.Context)
}
