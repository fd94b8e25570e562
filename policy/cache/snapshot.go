package cache

import "github.com/f0b5b96b/resilience/telemetry"

// Kind is the kind of a cache's snapshots and events.
const Kind telemetry.Kind = "cache"

// Name returns the cache's name (its Config.Name); "" if it has none.
func (c *Cache[T]) Name() string { return c.name }

// Snapshot returns [Cache.Stats] in the shape all guards share, so that a
// cache can be registered in a telemetry.Registry and read by exporters,
// dashboards and health checks: Kind "cache", the cache's Name, no State,
// Refused 0 (a cache refuses nothing), and these values:
//
//	hits              counter  "{call}"   calls answered from the store
//	misses            counter  "{call}"   loads started for calls
//	coalesced         counter  "{call}"   calls that waited for another call's load
//	stale             counter  "{call}"   stale values returned
//	evictions         counter  "{entry}"  entries evicted for the store's bounds
//	refreshes         counter  "{load}"   background refreshes started
//	refresh_failures  counter  "{load}"   refreshes that failed
//	entries           gauge    "{entry}"  entries the in-memory store holds (0 with a Store)
//	size              gauge    "By"       their size, as the cache measures it (0 with a Store)
//
// Each count is read atomically, not all at one instant (see Stats). It
// allocates the Values slice. It is safe for simultaneous use.
func (c *Cache[T]) Snapshot() telemetry.Snapshot {
	s := c.Stats()
	return telemetry.Snapshot{
		Kind: Kind,
		Name: c.name,
		Values: []telemetry.Value{
			{Name: "hits", Unit: "{call}", Type: telemetry.CounterValue, Help: "Calls answered from the store, fresh or stale while revalidating.", Value: float64(s.Hits)},
			{Name: "misses", Unit: "{call}", Type: telemetry.CounterValue, Help: "Loads started for calls (refreshes not included).", Value: float64(s.Misses)},
			{Name: "coalesced", Unit: "{call}", Type: telemetry.CounterValue, Help: "Calls that waited for another call's load of their key.", Value: float64(s.Coalesced)},
			{Name: "stale", Unit: "{call}", Type: telemetry.CounterValue, Help: "Stale values returned.", Value: float64(s.Stale)},
			{Name: "evictions", Unit: "{entry}", Type: telemetry.CounterValue, Help: "Entries the in-memory store evicted for its bounds.", Value: float64(s.Evictions)},
			{Name: "refreshes", Unit: "{load}", Type: telemetry.CounterValue, Help: "Background refreshes started.", Value: float64(s.Refreshes)},
			{Name: "refresh_failures", Unit: "{load}", Type: telemetry.CounterValue, Help: "Background refreshes that failed.", Value: float64(s.RefreshFailures)},
			{Name: "entries", Unit: "{entry}", Help: "Entries the in-memory store holds now; 0 with a Store.", Value: float64(s.Entries)},
			{Name: "size", Unit: "By", Help: "The size of those entries, as the cache measures it; 0 with a Store.", Value: float64(s.Bytes)},
		},
	}
}
