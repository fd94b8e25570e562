package resilienceotel

import (
	"maps"
	"sync"
	"sync/atomic"
)

// series is a set of metric series by key, read on every event and call: a
// lookup of a key seen before takes no lock and allocates nothing (one map
// read through an atomic pointer); the first use of a key copies the map
// under a lock. Keys are bounded (see bound), so the map stays small.
type series[K comparable, V any] struct {
	m  atomic.Pointer[map[K]*V]
	mu sync.Mutex
}

// load returns the series of k, or nil if k has none yet.
func (s *series[K, V]) load(k K) *V {
	if m := s.m.Load(); m != nil {
		return (*m)[k]
	}
	return nil
}

// get returns the series of k, made by mk on first use.
func (s *series[K, V]) get(k K, mk func(K) *V) *V {
	if v := s.load(k); v != nil {
		return v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var next map[K]*V
	if m := s.m.Load(); m != nil {
		if v := (*m)[k]; v != nil { // added while this call waited
			return v
		}
		next = maps.Clone(*m)
	} else {
		next = make(map[K]*V)
	}
	v := mk(k)
	next[k] = v
	s.m.Store(&next)
	return v
}

// each calls f for every series, in no particular order.
func (s *series[K, V]) each(f func(K, *V)) {
	if m := s.m.Load(); m != nil {
		for k, v := range *m {
			f(k, v)
		}
	}
}

// other is the value an attribute takes past its bound: the one
// OpenTelemetry's semantic conventions give error.type when no better value
// is known.
const other = "_OTHER"

// bound keeps the distinct values of an attribute within a group (the
// keys of one keyed guard, say) to at most max: the first max values seen
// are kept, later ones read as other. A value admitted before, or any value
// of a group that is full, is read without a lock; admitting a new value
// takes one.
type bound[G comparable] struct {
	max    int
	seen   series[boundKey[G], struct{}]
	full   series[G, struct{}]
	mu     sync.Mutex
	counts map[G]int
}

type boundKey[G comparable] struct {
	group G
	value string
}

func newStruct[K any](K) *struct{} { return &struct{}{} }

// of returns v if it is within the bound of group g, else other.
func (b *bound[G]) of(g G, v string) string {
	if b.seen.load(boundKey[G]{g, v}) != nil {
		return v
	}
	if b.full.load(g) != nil {
		return other
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen.load(boundKey[G]{g, v}) != nil {
		return v
	}
	if b.counts[g] >= b.max {
		b.full.get(g, newStruct)
		return other
	}
	if b.counts == nil {
		b.counts = make(map[G]int)
	}
	b.counts[g]++
	b.seen.get(boundKey[G]{g, v}, newStruct)
	return v
}
