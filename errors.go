package resilience

import (
	"errors"
	"math"
	"time"
)

// ErrRefused is matched, through errors.Is, by every refusal of this
// library's guards: an open breaker, a breaker's full half-open trial set, a
// full bulkhead, a rate limit. A refusal means the dependency was not called,
// so it says nothing about the dependency's health: a breaker does not count
// an inner guard's refusal as a failure. Each guard also has its own
// sentinel (breaker.ErrOpen, bulkhead.ErrFull, ratelimit.ErrLimited, ...),
// and every refusal is a *[RefusedError].
var ErrRefused = errors.New("resilience: refused")

// Never is the Retry-After hint that means "do not come back": the largest
// Duration. A breaker forced open and a rate limiter of rate 0 give it; a
// retry policy stops at once on it, and an HTTP server leaves the
// Retry-After header out for it.
const Never = time.Duration(math.MaxInt64)

// RefusedError is the error of a call that a guard refused: the dependency
// was not called. It matches, through errors.Is, the guard's own sentinel
// (its Reason, such as breaker.ErrOpen) and [ErrRefused], and it says which
// guard refused ([RefusedError.Name]) and, where the guard can know it, when
// to come back ([RefusedError.RetryAfter]). Get one with errors.As:
//
//	var re *resilience.RefusedError
//	if errors.As(err, &re) {
//		log.Printf("%s refused: %v, retry after %v", re.Name(), re.Reason(), re.RetryAfter())
//	}
//
// A RefusedError is immutable: guards may return one value to many callers
// (refusing then allocates nothing). Guards make them with [Refuse].
type RefusedError struct {
	reason error
	name   string
	after  time.Duration // the hint; negative: none
}

// Refuse returns the refusal of a guard named name (possibly empty) for
// reason, the guard's sentinel, which must match [ErrRefused]. retryAfter is
// when to come back: >= 0 is a hint ([Never] for never); a negative value
// (-1) means the guard cannot know, and the error then carries no hint.
//
// Refuse is for guards: this library's, and your own. It panics if reason
// is nil or does not match ErrRefused.
func Refuse(reason error, name string, retryAfter time.Duration) *RefusedError {
	if reason == nil || !errors.Is(reason, ErrRefused) {
		panic("resilience: Refuse reason must match ErrRefused, got " + errString(reason))
	}
	return &RefusedError{reason: reason, name: name, after: max(retryAfter, -1)}
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return "\"" + err.Error() + "\""
}

// Name returns the name of the guard that refused, possibly empty.
func (e *RefusedError) Name() string { return e.name }

// Reason returns the guard's sentinel: why the call was refused.
func (e *RefusedError) Reason() error { return e.reason }

// RetryAfter returns how long the caller should wait before trying again:
// [Never] for never, and -1 when the guard cannot know (a negative
// RetryAfter() is no hint: [RetryAfter] passes it over).
func (e *RefusedError) RetryAfter() time.Duration { return e.after }

// Error reads, for example, "breaker: open (payments), retry after 12s",
// "ratelimit: limited (api), retry never" or "bulkhead: full (db)": the
// reason's message, the name in parentheses unless it is empty, and the
// hint if there is one.
func (e *RefusedError) Error() string {
	msg := e.reason.Error()
	if e.name != "" {
		msg += " (" + e.name + ")"
	}
	switch {
	case e.after < 0:
	case e.after == Never:
		msg += ", retry never"
	default:
		msg += ", retry after " + e.after.String()
	}
	return msg
}

// Unwrap returns the reason.
func (e *RefusedError) Unwrap() error { return e.reason }

// Is reports whether target is e's reason, so that errors.Is(err,
// breaker.ErrOpen) matches on its first step, without unwrapping; the
// reason's parents (such as [ErrRefused]) still match through Unwrap.
func (e *RefusedError) Is(target error) bool { return target == e.reason }

// RetryAfter reports the wait that err asks for before the next attempt: the
// hint of the first error in err's tree (in the order errors.Is walks it:
// Unwrap() error and Unwrap() []error, depth first) that has a method
// RetryAfter() time.Duration returning a hint >= 0. A negative RetryAfter()
// means "no hint" (a bulkhead's refusal, a 503 without a Retry-After
// header): that error is passed over and the walk goes on through what it
// wraps. Refusals of this library's guards have a hint where the guard can
// know it (an open breaker's remaining cooldown, a rate limiter's time to
// the next token), and so may errors of other packages, such as an HTTP 429
// or 503 with a Retry-After header. ok is false when no error in the tree
// has a hint. [Never] means never. RetryAfter does not allocate.
func RetryAfter(err error) (d time.Duration, ok bool) {
	for err != nil {
		if h, isHint := err.(interface{ RetryAfter() time.Duration }); isHint {
			if d := h.RetryAfter(); d >= 0 {
				return d, true
			}
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
