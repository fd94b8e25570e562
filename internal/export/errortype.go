package export

import (
	"context"
	"errors"
	"reflect"
	"strconv"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// MaxErrorTypes bounds the distinct values of error.type one exporter
// reports; later ones read as [Other].
const MaxErrorTypes = 64

// knownErrors are the library's own conditions, in the order they are
// tried: a more specific sentinel before the one it wraps
// (breaker.ErrForcedOpen matches breaker.ErrOpen too, timeout.ErrTimeout
// matches context.DeadlineExceeded).
var knownErrors = []struct {
	err  error
	name string
}{
	{breaker.ErrForcedOpen, "breaker.forced_open"},
	{breaker.ErrOpen, "breaker.open"},
	{breaker.ErrTooManyTrials, "breaker.too_many_trials"},
	{bulkhead.ErrQueueTimeout, "bulkhead.queue_timeout"},
	{bulkhead.ErrFull, "bulkhead.full"},
	{ratelimit.ErrLimited, "ratelimit.limited"},
	{timeout.ErrTimeout, "timeout"},
	{resilience.ErrRefused, "refused"},
	{context.DeadlineExceeded, "context.deadline_exceeded"},
	{context.Canceled, "context.canceled"},
	{retry.ErrAttempts, "retry.attempts"},
	{retry.ErrMaxElapsed, "retry.max_elapsed"},
	{retry.ErrMaxWait, "retry.max_wait"},
	{retry.ErrBudgetExhausted, "retry.budget_exhausted"},
}

// reasons are the names of the guards' refusal sentinels, for the fast
// path of a *resilience.RefusedError (every guard refusal): one map read.
var reasons = func() map[error]string {
	m := make(map[error]string)
	for _, k := range knownErrors {
		if errors.Is(k.err, resilience.ErrRefused) {
			m[k.err] = k.name
		}
	}
	return m
}()

// sentinels are the names of knownErrors by error.
var sentinels = func() map[error]string {
	m := make(map[error]string)
	for _, k := range knownErrors {
		m[k.err] = k.name
	}
	return m
}()

// httpStatus is an error that carries an HTTP response's status code, as a
// resiliencehttp.StatusError does. Its error.type is the code ("503"), as
// OpenTelemetry's HTTP conventions have it, not its Go type.
type httpStatus interface{ HTTPStatusCode() int }

// statusCodes are the error.type values of the status codes 100 to 599,
// made once, so that naming a failure's status does not allocate.
var statusCodes = func() (s [600]string) {
	for c := 100; c < len(s); c++ {
		s[c] = strconv.Itoa(c)
	}
	return s
}()

// statusType is the error.type of HTTP status code c: its decimal digits.
func statusType(c int) string {
	if c >= 100 && c < len(statusCodes) {
		return statusCodes[c]
	}
	return strconv.Itoa(c)
}

// wrappers are the types of the standard library's wrapping errors, which
// say nothing of the error's class: error.type is the type of what they
// wrap.
var wrappers = map[string]bool{"*fmt.wrapError": true, "*fmt.wrapErrors": true, "*errors.joinError": true}

// ErrorType is the value of the error.type attribute for err: "" for nil;
// the name of the library's condition it matches (knownErrors), else err's
// Go type ("*url.Error"); for an error with an HTTPStatusCode() int method
// (a resiliencehttp.StatusError), the status code ("503"). It looks through fmt.Errorf's and errors.Join's wrappers
// (to the first error they wrap) and through a *retry.Error to its last
// attempt's error: why the retry gave up is in its retry.gave_up event.
func ErrorType(err error) string {
	if err == nil {
		return ""
	}
	switch e := err.(type) {
	case *resilience.RefusedError:
		if name, ok := reasons[e.Reason()]; ok {
			return name
		}
	case *retry.Error:
		if e.Err != nil {
			return ErrorType(e.Err)
		}
	case httpStatus:
		return statusType(e.HTTPStatusCode())
	}
	t := reflect.TypeOf(err).String()
	if wrappers[t] {
		var next error
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			next = u.Unwrap()
		case interface{ Unwrap() []error }:
			if es := u.Unwrap(); len(es) > 0 {
				next = es[0]
			}
		}
		if next != nil {
			return ErrorType(next)
		}
	}
	if leaf(err) { // errors.Is(err, k) is err == k: one map read
		if reflect.TypeOf(err).Comparable() {
			if name, ok := sentinels[err]; ok {
				return name
			}
		}
		return t
	}
	for _, k := range knownErrors {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return t
}

// leaf reports whether err wraps nothing and has no Is method, so that
// errors.Is(err, target) is err == target.
func leaf(err error) bool {
	switch err.(type) {
	case interface{ Unwrap() error }, interface{ Unwrap() []error }, interface{ Is(error) bool }:
		return false
	}
	return true
}
