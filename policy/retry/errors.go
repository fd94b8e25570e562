package retry

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// ErrBudgetExhausted is matched, through errors.Is, by the error a retry
// policy returns when its [Budget] denied the retry that would have come
// next. That error also wraps the error of the attempt that failed last, so
// errors.Is and errors.As reach it too. It is not a refusal in the sense of
// resilience.ErrRefused: the dependency was called, and failed.
var ErrBudgetExhausted = errors.New("retry: retry budget exhausted")

// Error is the error a retry policy returns when it gives up on an error
// that was worth retrying: the attempts ran out, the next wait would pass
// MaxElapsed (or a server's Retry-After hint asked for such a wait), the
// retry budget denied the retry, or the caller's context ended. Its message
// says which and how many attempts ran, for example
//
//	retry: gave up after 3 attempts: connection refused
//	retry: gave up after 2 attempts (context canceled): connection refused
//
// errors.Is and errors.As reach Err through an Error, and also the reason
// when it is an error: [ErrBudgetExhausted], or the context's error
// (context.Canceled or context.DeadlineExceeded).
type Error struct {
	// Attempts is how many times the op was called.
	Attempts int
	// Err is the error of the last attempt.
	Err error

	reason  error         // ErrBudgetExhausted or the context's error; nil otherwise
	elapsed time.Duration // MaxElapsed, if the next wait would have passed it; else 0
	wait    time.Duration // that wait
}

// Error returns "retry: gave up after N attempts (reason): " and Err's
// message.
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
	case e.reason == ErrBudgetExhausted:
		b.WriteString(" (retry budget exhausted)")
	case e.reason != nil:
		b.WriteString(" (" + e.reason.Error() + ")")
	case e.elapsed > 0:
		b.WriteString(" (a wait of " + e.wait.String() + " would pass MaxElapsed " + e.elapsed.String() + ")")
	}
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("<nil>")
	}
	return b.String()
}

// Unwrap returns the reason, when it is an error, and Err.
func (e *Error) Unwrap() []error {
	if e.reason != nil {
		return []error{e.reason, e.Err}
	}
	return []error{e.Err}
}

// Permanent returns err marked as not worth retrying: a retry policy returns
// it at once, as it is, without another attempt. The mark is transparent:
// the result's message is err's, and errors.Is and errors.As reach err
// through it. The mark survives wrapping with %w, so a Permanent error
// returned by an inner retry also stops the outer ones. Permanent(nil)
// returns nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string        { return e.err.Error() }
func (e *permanentError) Unwrap() error        { return e.err }
func (e *permanentError) Is(target error) bool { return target == errPermanent }

// errPermanent is matched by every error marked by [Permanent]; errors.Is
// finds it without allocating, where errors.As would.
var errPermanent = errors.New("retry: permanent")

// isPermanent reports whether err's chain holds an error marked by
// [Permanent].
func isPermanent(err error) bool { return errors.Is(err, errPermanent) }
