// Package refusal holds what the guards' refusal sentinels share.
package refusal

import "github.com/f0b5b96b/resilience"

// Sentinel is a guard's sentinel refusal error (breaker.ErrOpen,
// bulkhead.ErrFull, ratelimit.ErrLimited, ...): its message is msg, and it
// matches its parent, and so resilience.ErrRefused, through errors.Is.
// Sentinels are pointers, so errors.Is compares them by identity, not by
// their text.
type Sentinel struct {
	msg    string
	parent error
}

// New returns a sentinel whose message is msg and which unwraps to parent,
// or to resilience.ErrRefused if parent is nil. A parent must itself match
// resilience.ErrRefused (a more general sentinel of the same guard).
func New(msg string, parent error) *Sentinel {
	if parent == nil {
		parent = resilience.ErrRefused
	}
	return &Sentinel{msg: msg, parent: parent}
}

func (s *Sentinel) Error() string { return s.msg }

// Unwrap returns the parent sentinel, or resilience.ErrRefused.
func (s *Sentinel) Unwrap() error { return s.parent }
