package retry

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// ErrAttempts is the [Error.Reason] when the policy gave up because the
// attempts ([Config.Attempts]) were used up. errors.Is matches it through
// the Error.
var ErrAttempts = errors.New("retry: attempts used up")

// ErrMaxElapsed is the [Error.Reason] when the policy gave up because of
// [Config.MaxElapsed]: the attempts used it up, or the next wait (a
// Retry-After hint included) would have ended past it. errors.Is matches it
// through the Error.
var ErrMaxElapsed = errors.New("retry: MaxElapsed reached")

// ErrMaxWait is the [Error.Reason] when the policy gave up because an
// attempt's Retry-After hint asked for a wait longer than
// [Config.MaxWait]. errors.Is matches it through the Error.
var ErrMaxWait = errors.New("retry: Retry-After exceeds MaxWait")

// ErrBudgetExhausted is the [Error.Reason] when the policy gave up because
// its [Budget] denied the retry that would have come next. errors.Is
// matches it through the Error. It is not a refusal in the sense of
// resilience.ErrRefused: the dependency was called, and failed.
var ErrBudgetExhausted = errors.New("retry: retry budget exhausted")

// Error is the error a retry policy returns when it gives up on an error
// that was worth retrying. (Errors that were not — marked
// resilience.Permanent, rejected by [Config.RetryIf], or with a Retry-After
// hint of resilience.Never — come back as they are, whatever the context.) Its message says why and
// how many attempts ran, for example
//
//	retry: gave up after 3 attempts: connection refused
//	retry: gave up after 2 attempts (context canceled): connection refused
//	retry: gave up after 2 attempts (a wait of 4s would pass MaxElapsed 5s): connection refused
//	retry: gave up after 2 attempts (a Retry-After of 16m40s exceeds MaxWait 10s): 503 Service Unavailable
//
// errors.Is and errors.As reach Err, the last attempt's error, through an
// Error, and also Reason, which says why the policy gave up: compare Reason
// with the values below (errors.Is on the Error may also match them through
// Err, when the op's own error is one of them).
type Error struct {
	// Attempts is how many attempts were made: calls of the rest of the
	// chain, including ones that an inner guard (an open breaker, a full
	// bulkhead) refused before they reached the op.
	Attempts int

	// Err is the error of the last attempt.
	Err error

	// Reason is why the policy gave up, one of:
	//   - [ErrAttempts]: the attempts were used up;
	//   - [ErrMaxElapsed]: MaxElapsed was used up, or the next wait would
	//     have passed it;
	//   - [ErrMaxWait]: the last error's Retry-After hint was longer than
	//     MaxWait;
	//   - [ErrBudgetExhausted]: the retry budget denied the retry;
	//   - context.Canceled or context.DeadlineExceeded (the context's
	//     error): the caller's context ended, or the next wait would not
	//     have ended before its deadline (then the policy did not wait).
	Reason error

	wait  time.Duration // the wait that was refused, for ErrMaxElapsed, ErrMaxWait and a deadline ahead
	limit time.Duration // MaxElapsed, MaxWait, or the time left until the deadline ahead
	used  time.Duration // time elapsed, for ErrMaxElapsed
	ahead bool          // Reason is DeadlineExceeded for a deadline not yet reached
}

// Error returns "retry: gave up after N attempts (why): " and Err's
// message; the parenthesis is left out when the attempts were used up.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("retry: gave up after ")
	b.WriteString(strconv.Itoa(e.Attempts))
	if e.Attempts == 1 {
		b.WriteString(" attempt")
	} else {
		b.WriteString(" attempts")
	}
	switch {
	case e.Reason == nil || e.Reason == ErrAttempts:
	case e.Reason == ErrBudgetExhausted:
		b.WriteString(" (retry budget exhausted)")
	case e.Reason == ErrMaxElapsed && e.used >= e.limit:
		b.WriteString(" (MaxElapsed " + e.limit.String() + " used up: " + e.used.String() + " elapsed)")
	case e.Reason == ErrMaxElapsed:
		b.WriteString(" (a wait of " + e.wait.String() + " would pass MaxElapsed " + e.limit.String() + ")")
	case e.Reason == ErrMaxWait:
		b.WriteString(" (a Retry-After of " + e.wait.String() + " exceeds MaxWait " + e.limit.String() + ")")
	case e.ahead && e.limit <= 0:
		b.WriteString(" (the context's deadline has passed)")
	case e.ahead:
		b.WriteString(" (a wait of " + e.wait.String() + " would not end before the context's deadline, " + e.limit.String() + " away)")
	default:
		b.WriteString(" (" + e.Reason.Error() + ")")
	}
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("<nil>")
	}
	return b.String()
}

// Unwrap returns Reason and Err (those that are not nil).
func (e *Error) Unwrap() []error {
	if e.Reason == nil {
		return []error{e.Err}
	}
	return []error{e.Reason, e.Err}
}
