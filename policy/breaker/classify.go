package breaker

import (
	"context"
	"errors"
	"strconv"

	"github.com/f0b5b96b/resilience"
)

// Outcome is what a finished call says about the dependency's health. The
// zero Outcome is [Success].
type Outcome uint8

const (
	// Success counts toward Successes and resets ConsecutiveFailures.
	Success Outcome = iota
	// Failure counts toward Failures and resets ConsecutiveSuccesses.
	Failure
	// Ignored counts neither way: the call says nothing about the
	// dependency. A half-open trial that is ignored frees its slot.
	Ignored
)

// String returns "success", "failure" or "ignored", or "Outcome(n)" for an
// unknown value n.
func (o Outcome) String() string {
	switch o {
	case Success:
		return "success"
	case Failure:
		return "failure"
	case Ignored:
		return "ignored"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// DefaultClassify is the classifier a breaker uses unless Config.Classify
// is set. It returns [Success] for a nil error; [Ignored] for an error that
// matches, through errors.Is, context.Canceled (the caller gave up: that says
// nothing about the dependency) or resilience.ErrRefused (an inner guard —
// bulkhead, rate limiter, another breaker — refused the call, so the
// dependency was not called); and [Failure] for any other error.
//
// context.DeadlineExceeded is a failure: a dependency that did not answer
// before the deadline failed the call, whether the deadline came from a
// timeout policy or from the caller. (The [Policy] adapter does not call the
// op at all when the caller's context is already done, so a deadline that
// expired before the call is never counted.)
//
// A custom classifier can defer to DefaultClassify for the errors it has no
// opinion on.
func DefaultClassify(err error) Outcome {
	switch {
	case err == nil:
		return Success
	case errors.Is(err, context.Canceled), errors.Is(err, resilience.ErrRefused):
		return Ignored
	}
	return Failure
}
