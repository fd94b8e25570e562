// Package cache is a read-through cache as a layer of a
// resilience.Policy[T]: calls for a key are answered from stored values
// while they are fresh, concurrent misses of one key make one call to the
// dependency, and stale values stand in while the dependency is refreshed
// or failing.
//
// # Entry points
//
//   - [New] makes a [Cache] of values of type T, fresh for a TTL;
//     [Option]s configure it, or a [Config] read at run time (it reads and
//     writes JSON, is checked with [Config.Validate] and given with
//     [WithConfig]).
//   - [Cache.Policy] makes it a layer of a resilience.Policy[T]: put it
//     outermost, so that a hit costs nothing below it and a miss runs the
//     whole pipeline (retry, breaker, timeout) once for all its callers.
//     A call's key comes from its context: [Key] sets it, or [WithKey]
//     gives a function that finds it.
//   - [Guard] caches a function of one argument, the key taken from the
//     argument, as resilience.Guard guards one.
//   - [WithInfo] and [WasStale] tell a caller how its call was answered
//     (hit, miss, coalesced, bypassed) and whether the value is stale: a
//     stale value comes with a nil error, as a fresh one does.
//   - [Cache.Invalidate] and [Cache.Purge] remove entries;
//     [Cache.Stats] counts; [Cache.Name] and [Cache.Snapshot] (kind
//     [Kind]) make a cache a telemetry.Guard, for a telemetry.Registry,
//     the exporters, the dashboard and health checks; [WithObserver]
//     reports events ([EventHit], [EventMiss], [EventCoalesced],
//     [EventStale], [EventEvicted], [EventRefreshFailed]).
//   - [Store] lets a shared store hold the entries ([WithStore]).
//
// # Keys
//
// Keys are strings. The empty key bypasses the cache: the call goes
// through to the dependency and nothing is stored or counted. A key
// function (WithKey's, or Guard's) that panics panics in the caller,
// before the cache is touched.
//
// # A call
//
//  1. A fresh entry (stored less than TTL ago) is returned: a value, or an
//     error cached by [WithNegativeTTL].
//  2. A value past its TTL but within StaleWhileRevalidate is returned at
//     once, marked stale, and one background refresh of the key starts if
//     none is running and fewer than MaxRefreshes run over all keys.
//  3. Otherwise the call waits for the key's load in flight, or starts
//     one: concurrent misses of a key make one call of the dependency. The
//     load runs in a goroutine of its own (or in the caller's, if the
//     caller's context can never end: its Done is nil), under
//     context.WithoutCancel of the context of the call that started it
//     (its values, not its cancellation or deadline), canceled after
//     LoadTimeout. Each waiter
//     honours its own context: one that ends returns ctx.Err(), and the
//     load goes on for the others and is stored. A call whose context is
//     done before it would wait returns ctx.Err() and starts nothing.
//  4. A load that succeeds is stored (unless its value alone is larger
//     than MaxBytes: it is returned, and the older entry removed). One
//     that fails with an error NegativeIf accepts is stored as that error
//     for NegativeTTL. Any other failure is returned, unless StaleIfError
//     is set, StaleIf accepts the error, and a value of the key expired
//     less than StaleIfError ago: that value is returned with a nil error,
//     marked stale (Info.Err holds the failure).
//
// A value is never returned StaleWhileRevalidate or StaleIfError (the
// longer) or more past its TTL: both windows are measured from the end
// of the TTL, and end exclusive. Sums of durations that do not fit a
// time.Duration (a TTL of math.MaxInt64 plus a window) saturate at the
// longest Duration, about 292 years: an entry is then kept that long.
//
// A load that panics panics in every caller waiting for it with a
// [*PanicError], which holds the load's panic value and the stack where
// the load panicked (a load that calls runtime.Goexit, with a string
// saying so); it stores nothing. A background refresh that panics reports
// [ErrLoadPanicked] in its [EventRefreshFailed] event.
//
// # Settings
//
// Each option sets the [Config] field of its name; a zero field means the
// default below.
//
//	option, field                       default                    unit
//	(ttl), TTL                          New's argument             time.Duration, > 0
//	WithMaxEntries, MaxEntries          10 000                     entries, second chance out
//	WithMaxBytes, MaxBytes              no bound                   WithSize's unit
//	WithSize, Size                      every value 0              func(T) int64
//	WithStaleWhileRevalidate            off                        time.Duration past TTL
//	WithStaleIfError, StaleIfError      off                        time.Duration past TTL
//	WithStaleIf, StaleIf                every error                func(error) bool
//	WithMaxRefreshes, MaxRefreshes      16                         refreshes at once, all keys
//	WithLoadTimeout, LoadTimeout        30s; resilience.Off: none  time.Duration per load
//	WithNegativeTTL, NegativeTTL        off                        time.Duration
//	WithNegativeIf, NegativeIf          none (needs NegativeTTL)   func(error) bool
//	WithKey, Key                        the key of [Key]           func(context.Context) string
//	WithStore, Store                    in memory                  Store[T]
//	WithName, Name                      unnamed                    layer "cache(Name)", events
//	WithObserver, Observer              nil: no events
//	WithClock, Clock                    clock.Real()               all times
//
// The in-memory store keeps at most MaxEntries entries. The one evicted
// is chosen by second chance (CLOCK), an approximation of least recently
// used that lets a hit take no lock: a hit marks its entry used without
// moving it; an entry stored goes to the front of the recency list,
// unmarked; the back entry is evicted if unmarked, and otherwise loses
// its mark and goes to the front. So an entry not hit since it last
// reached the back goes before any entry hit since, but among entries
// all hit, the one stored (or passed over) first goes, not the one hit
// least recently. A cache of 1024 entries or more (and no MaxBytes)
// splits its keys over 16 shards, and MaxEntries bounds them together
// (one count of entries), so MaxEntries distinct keys always fit, however
// they hash: an entry stored over the bound evicts from its own shard,
// or, if that shard holds no other entry, from the next shard that holds
// one. So the order is within a shard. A cache with MaxBytes has one
// shard. Entries past their use (TTL plus the longer
// stale window) are removed when a call finds them, or pushed out by the
// bound.
//
// # Invalidation
//
// [Cache.Invalidate] removes a key's entry; a load of the key in flight
// still answers the callers waiting for it, but its result is not
// stored, and the next call starts a new load (so two loads of one key
// may then run at once, the only case where they do). [Cache.Purge] does
// so for every key.
//
// # Cost and concurrency
//
// A Cache is safe for simultaneous use by multiple goroutines. A hit of
// the in-memory store takes no lock, reads no clock and allocates
// nothing: each shard's index of keys is read with atomic loads (the
// stores, evictions and removals take the shard's lock), and it is
// counted on one of several counters picked by the calling goroutine's
// stack, so that hits of one key on several cores mostly write cache
// lines of their own (the entry's is only read once it is marked used).
// A call through a Policy looks up its context once, for its key and its
// Info together ([Key] and [WithInfo] share one context value); with
// [WithKey], it calls the key function, then looks up the Info. Each
// entry has a timer of the cache's clock, armed when it is stored, that
// marks it stale at its TTL. The timer reaches its entry through a weak
// pointer: a Cache that is no longer reachable is collected with its
// entries and values; only the timers of its entries (a few dozen bytes
// each, holding no value) stay until their TTL. With clock.Real the
// mark comes when the runtime runs the timer, which can be a little after
// the TTL (the runtime's timer latency, microseconds on an idle machine);
// with a clock.Fake it comes exactly at the TTL. A hit through a [Store]
// reads the clock instead. A call that waits for another's load allocates
// nothing; a call that starts a load allocates the load (its flight,
// context, timers and goroutine) and the entry it stores. The
// observer is called from the calling goroutine, or the load's, never
// with a lock held.
package cache
