// Package lockedrand makes a *rand.Rand of math/rand/v2 safe for
// simultaneous use, for the WithRand options of the resilience packages.
package lockedrand

import (
	"math/rand/v2"
	"sync"
)

// New returns a *rand.Rand that draws from r under a mutex: its methods are
// safe for simultaneous use by multiple goroutines, and it gives the same
// numbers in the same order as r would. r must not be used elsewhere at the
// same time. New(nil) is nil.
func New(r *rand.Rand) *rand.Rand {
	if r == nil {
		return nil
	}
	return rand.New(&source{r: r})
}

// Float64 returns a function that draws r.Float64() under a mutex, safe
// for simultaneous use. Float64(nil) is nil.
func Float64(r *rand.Rand) func() float64 {
	if r == nil {
		return nil
	}
	return New(r).Float64
}

// source is a rand.Source that locks r around each draw. A rand.Rand holds
// no state but its Source, so one built on source is safe for simultaneous
// use.
type source struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (s *source) Uint64() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.r.Uint64()
}
