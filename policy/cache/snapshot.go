package cache

import "github.com/f0b5b96b/resilience/telemetry"

// Kind is the kind of a cache's snapshots.
const Kind telemetry.Kind = "cache"

// Name returns the cache's name (its Config.Name); "" if it has none.
func (c *Cache[T]) Name() string { return c.name }

// Snapshot returns [Cache.Stats] in the shape all guards share, for a
// telemetry.Registry, exporters, dashboards and health checks: Kind
// "cache", the cache's Name, no State, no refusals (a cache refuses
// nothing: a call it cannot answer goes through to the dependency), and
// these values:
//
//	hits              counter  "{call}"   calls answered from the store
//	misses            counter  "{call}"   loads started for calls
//	coalesced         counter  "{call}"   calls that waited for another's load
//	stale             counter  "{call}"   stale values returned
//	evictions         counter  "{entry}"  entries evicted for the bounds
//	refreshes         counter  "{load}"   background refreshes started
//	refresh_failures  counter  "{load}"   background refreshes that failed
//	entries           gauge    "{entry}"  entries held (0 with a Store)
//	bytes             gauge    "By"       bytes held (0 with a Store)
//
// It is safe to call at any time from any goroutine; it allocates the
// Values slice.
func (c *Cache[T]) Snapshot() telemetry.Snapshot {
	s := c.Stats()
	counter := func(name, unit, help string, v uint64) telemetry.Value {
		return telemetry.Value{Name: name, Unit: unit, Type: telemetry.CounterValue, Help: help, Value: float64(v)}
	}
	return telemetry.Snapshot{
		Kind: Kind,
		Name: c.name,
		Values: []telemetry.Value{
			counter("hits", "{call}", "Calls answered from the store, fresh or within StaleWhileRevalidate.", s.Hits),
			counter("misses", "{call}", "Loads started for calls (background refreshes not included).", s.Misses),
			counter("coalesced", "{call}", "Calls that waited for another call's load of their key.", s.Coalesced),
			counter("stale", "{call}", "Stale values returned (StaleWhileRevalidate and StaleIfError).", s.Stale),
			counter("evictions", "{entry}", "Entries the in-memory store evicted for its bounds.", s.Evictions),
			counter("refreshes", "{load}", "Background refreshes started.", s.Refreshes),
			counter("refresh_failures", "{load}", "Background refreshes that failed.", s.RefreshFailures),
			{Name: "entries", Unit: "{entry}", Help: "Entries the in-memory store holds now (0 with a Store).", Value: float64(s.Entries)},
			{Name: "bytes", Unit: "By", Help: "Bytes the in-memory store holds now, as WithSize measures them (0 with a Store).", Value: float64(s.Bytes)},
		},
	}
}
