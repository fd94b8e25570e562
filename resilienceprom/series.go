package resilienceprom

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
