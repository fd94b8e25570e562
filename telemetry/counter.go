package telemetry

import (
	"cmp"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
)

// Counter is an [Observer] that counts events per policy name and event
// type, for exporters to read ([Counter.Count], [Counter.Counts]). It
// keeps no event: only counts. Event.Key is not part of what it counts by,
// so a keyed guard's events count under its name, whatever their keys.
//
// Counting an event of a (name, type) seen before takes no lock and
// allocates nothing: one map lookup and one atomic add. The first event of
// a new (name, type) copies the map, under a lock: the set of names and
// types is small and fixed in a running service.
//
// The zero Counter counts nothing yet and is ready to use. A Counter is
// safe for simultaneous use by multiple goroutines; it must not be copied
// after first use.
type Counter struct {
	m  atomic.Pointer[map[countKey]*atomic.Uint64] // copied on write
	mu sync.Mutex                                  // serialises writers of m
}

type countKey struct {
	name string
	typ  Type
}

// NewCounter returns a Counter that has counted nothing.
func NewCounter() *Counter { return new(Counter) }

// Observe counts e under (e.Name, e.Type).
func (c *Counter) Observe(e Event) {
	k := countKey{e.Name, e.Type}
	if m := c.m.Load(); m != nil {
		if n := (*m)[k]; n != nil {
			n.Add(1)
			return
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var next map[countKey]*atomic.Uint64
	if m := c.m.Load(); m != nil {
		if n := (*m)[k]; n != nil { // added while this call waited
			n.Add(1)
			return
		}
		next = maps.Clone(*m)
	} else {
		next = make(map[countKey]*atomic.Uint64)
	}
	n := new(atomic.Uint64)
	n.Store(1)
	next[k] = n
	c.m.Store(&next)
}

// Count returns how many events of type t the policy named name has
// emitted; 0 for a pair never seen.
func (c *Counter) Count(name string, t Type) uint64 {
	if m := c.m.Load(); m != nil {
		if n := (*m)[countKey{name, t}]; n != nil {
			return n.Load()
		}
	}
	return 0
}

// Count is one count of a [Counter]: N events of Type from the policy
// named Name (whose kind is Type.Kind()).
type Count struct {
	Name string
	Type Type
	N    uint64
}

// Counts returns every count, by name and then type. Each count is read
// atomically; counts that grow meanwhile may be read before or after.
func (c *Counter) Counts() []Count {
	m := c.m.Load()
	if m == nil {
		return nil
	}
	out := make([]Count, 0, len(*m))
	for k, n := range *m {
		out = append(out, Count{k.name, k.typ, n.Load()})
	}
	slices.SortFunc(out, func(a, b Count) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Type, b.Type))
	})
	return out
}
