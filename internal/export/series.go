package export

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Series is a set of metric series by key, read on every event and call: a
// lookup of a key seen before takes no lock and allocates nothing (one map
// read through an atomic pointer); the first use of a key copies the map
// under a lock. Keys should be bounded (see [Bound]), so the map stays
// small. The zero Series is empty and ready to use; a Series is safe for
// simultaneous use by multiple goroutines and must not be copied after
// first use.
type Series[K comparable, V any] struct {
	m  atomic.Pointer[map[K]*V]
	mu sync.Mutex
}

// Load returns the series of k, or nil if k has none yet.
func (s *Series[K, V]) Load(k K) *V {
	if m := s.m.Load(); m != nil {
		return (*m)[k]
	}
	return nil
}

// Get returns the series of k, made by mk on first use (mk runs at most
// once per key, under the Series' lock; it must not return nil).
func (s *Series[K, V]) Get(k K, mk func(K) *V) *V {
	if v := s.Load(k); v != nil {
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

// Each calls f for every series, in no particular order. A series added
// during Each may or may not be seen.
func (s *Series[K, V]) Each(f func(K, *V)) {
	if m := s.m.Load(); m != nil {
		for k, v := range *m {
			f(k, v)
		}
	}
}
