// Package refusal holds what the guards' refusal errors share.
package refusal

import "github.com/f0b5b96b/resilience"

// Sentinel is the type of a guard's sentinel refusal errors (breaker.ErrOpen,
// bulkhead.ErrFull, ratelimit.ErrLimited, ...): its message is the string,
// and it matches resilience.ErrRefused through errors.Is.
type Sentinel string

func (s Sentinel) Error() string { return string(s) }

// Unwrap returns resilience.ErrRefused.
func (Sentinel) Unwrap() error { return resilience.ErrRefused }
