package resilience

import (
	"errors"
	"time"
)

// ErrRefused is matched, through errors.Is, by every refusal of this
// library's guards: an open breaker, a breaker's full half-open trial set, a
// full bulkhead, a rate limit. A refusal means the dependency was not called,
// so it says nothing about the dependency's health: a breaker does not count
// an inner guard's refusal as a failure. Each guard also has its own
// sentinel (breaker.ErrOpen, bulkhead.ErrFull, ratelimit.ErrLimited, ...).
var ErrRefused = errors.New("resilience: refused")

// RetryAfter reports the wait that err asks for before the next attempt: the
// first error in err's tree (in the order errors.Is walks it: Unwrap() error
// and Unwrap() []error, depth first) with a method RetryAfter()
// time.Duration. Refusals of this library's guards have one (an open
// breaker's remaining cooldown, a rate limiter's time to the next token), and
// so may errors of other packages, such as an HTTP 429 or 503 with a
// Retry-After header. ok is false when no error in the tree has the method.
// A negative hint is reported as 0. RetryAfter does not allocate.
func RetryAfter(err error) (d time.Duration, ok bool) {
	for err != nil {
		if h, isHint := err.(interface{ RetryAfter() time.Duration }); isHint {
			return max(h.RetryAfter(), 0), true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if d, ok := RetryAfter(e); ok {
					return d, true
				}
			}
			return 0, false
		default:
			return 0, false
		}
	}
	return 0, false
}
