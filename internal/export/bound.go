package export

import "sync"

// Other is the value an attribute takes past its bound: the one
// OpenTelemetry's semantic conventions give error.type when no better value
// is known.
const Other = "_OTHER"

// Bound keeps the distinct values of an attribute within a group (the keys
// of one keyed guard, say) to at most a maximum: the first max values seen
// are kept, later ones read as [Other]. A value admitted before, or any
// value of a group that is full, is read without a lock; admitting a new
// value takes one. The zero Bound has admitted nothing; a Bound is safe for
// simultaneous use by multiple goroutines and must not be copied after
// first use.
type Bound[G comparable] struct {
	seen   Series[boundKey[G], struct{}]
	full   Series[G, struct{}]
	mu     sync.Mutex
	counts map[G]int
}

type boundKey[G comparable] struct {
	group G
	value string
}

func newStruct[K any](K) *struct{} { return &struct{}{} }

// Of returns v if it is within the bound of group g, at most max values
// (max < 1: none), else [Other]. Give every call on one Bound the same max.
func (b *Bound[G]) Of(max int, g G, v string) string {
	if b.seen.Load(boundKey[G]{g, v}) != nil {
		return v
	}
	if b.full.Load(g) != nil {
		return Other
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen.Load(boundKey[G]{g, v}) != nil {
		return v
	}
	if b.counts[g] >= max {
		b.full.Get(g, newStruct)
		return Other
	}
	if b.counts == nil {
		b.counts = make(map[G]int)
	}
	b.counts[g]++
	b.seen.Get(boundKey[G]{g, v}, newStruct)
	return v
}
