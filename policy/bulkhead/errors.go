package bulkhead

import (
	"time"

	"github.com/f0b5b96b/resilience/internal/refusal"
)

// ErrFull is matched, through errors.Is, by every refusal of a [Bulkhead]:
// every slot taken and no room in the queue, or [Config.MaxWait] spent in
// the queue. It also matches resilience.ErrRefused. Refusals are returned
// as a *[FullError], which carries the bulkhead's name.
var ErrFull error = refusal.Sentinel("bulkhead: full")

// FullError is the error of a refused [Bulkhead.Acquire]. It matches
// [ErrFull] and resilience.ErrRefused through errors.Is.
type FullError struct {
	// Name is the bulkhead's [Config.Name], possibly empty.
	Name string

	// Waited is how long the caller waited in the queue before it was
	// refused: [Config.MaxWait] when the wait ran out, 0 when the caller
	// was refused at once.
	Waited time.Duration
}

// Error reads "bulkhead: full (db)", or "bulkhead: full (db) after waiting
// 100ms in the queue"; the parenthesis is left out when Name is empty.
func (e *FullError) Error() string {
	msg := string(ErrFull.(refusal.Sentinel))
	if e.Name != "" {
		msg += " (" + e.Name + ")"
	}
	if e.Waited > 0 {
		msg += " after waiting " + e.Waited.String() + " in the queue"
	}
	return msg
}

// Unwrap returns [ErrFull].
func (e *FullError) Unwrap() error { return ErrFull }
