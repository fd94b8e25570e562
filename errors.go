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
// first error in err's chain (as errors.As walks it) with a method
// RetryAfter() time.Duration. Refusals of this library's guards have one (an
// open breaker's remaining cooldown, a rate limiter's time to the next
// token), and so may errors of other packages, such as an HTTP 429 or 503
// with a Retry-After header. ok is false when no error in the chain has the
// method. A negative hint is reported as 0.
func RetryAfter(err error) (d time.Duration, ok bool) {
	var h interface{ RetryAfter() time.Duration }
	if !errors.As(err, &h) {
		return 0, false
	}
	return max(h.RetryAfter(), 0), true
}
