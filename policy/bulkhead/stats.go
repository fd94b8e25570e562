package bulkhead

import "github.com/f0b5b96b/resilience/telemetry"

// Stats is a snapshot of a bulkhead's live state, from [Bulkhead.Stats].
type Stats struct {
	Limit    int // the most calls that may hold a slot at once, as [Bulkhead.Limit]
	InFlight int // slots held now, as [Bulkhead.InFlight]
	Queued   int // callers waiting for a slot now, as [Bulkhead.Queued]
	// Refused is the number of calls refused since the bulkhead was made
	// (ErrFull, ErrQueueTimeout, and TryAcquire returning false). It only
	// grows.
	Refused uint64
}

// Stats returns a snapshot of the bulkhead now. InFlight and Queued are
// read together from one atomic word, so they belong to one instant (with
// InFlight counting, for an instant, callers being refused, as
// [Bulkhead.InFlight] says); Limit and Refused are read beside it, each
// atomically. Stats takes no lock and allocates nothing. It is safe to call
// at any time from any goroutine.
func (b *Bulkhead) Stats() Stats {
	m := b.max.Load()
	s := b.state.Load()
	return Stats{
		Limit:    int(m),
		InFlight: int(s & heldMask),
		Queued:   int(max(s, 0) >> 32),
		Refused:  b.rejected.Load(),
	}
}

// Name returns the bulkhead's name (its Config.Name).
func (b *Bulkhead) Name() string { return b.cfg.Name }

// Snapshot returns [Bulkhead.Stats] in the shape all guards share, for a
// telemetry.Registry, exporters, dashboards and health checks: Kind
// Kind, the bulkhead's Name, no State, Refused
// (Stats.Refused), and the gauges limit, in_flight and queued (unit
// "{call}"). It allocates the Values slice.
func (b *Bulkhead) Snapshot() telemetry.Snapshot {
	s := b.Stats()
	return telemetry.Snapshot{
		Kind:    Kind,
		Name:    b.cfg.Name,
		Refused: s.Refused,
		Values: []telemetry.Value{
			{Name: "limit", Unit: "{call}", Help: "The most calls the bulkhead lets run at once.", Value: float64(s.Limit)},
			{Name: "in_flight", Unit: "{call}", Help: "Calls holding a slot of the bulkhead now.", Value: float64(s.InFlight)},
			{Name: "queued", Unit: "{call}", Help: "Calls waiting in the bulkhead's queue now.", Value: float64(s.Queued)},
		},
	}
}
