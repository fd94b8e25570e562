package export

import (
	"context"
	"errors"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/adaptive"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/throttle"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/telemetry"
)

// The outcomes of a call (the exporters' resilience.outcome attribute or
// outcome label).
const (
	OutcomeSuccess  = "success"  // the call returned no error
	OutcomeFailure  = "failure"  // it failed (and was not refused)
	OutcomeRejected = "rejected" // a guard refused it
	OutcomeIgnored  = "ignored"  // neither: the caller gave up, or a breaker ignored it
)

// PipelineType is the policy type under which the exporters count what a
// Measure layer sees: the calls through the layers inside it.
const PipelineType = "pipeline"

// EventOutcomes are the events that are the outcome of a call through a
// policy, by outcome: an exporter counts them among the calls as well as
// among the events. Read only.
var EventOutcomes = map[telemetry.Type]string{
	breaker.EventFailure:   OutcomeFailure,
	breaker.EventIgnored:   OutcomeIgnored,
	breaker.EventRefused:   OutcomeRejected,
	retry.EventGaveUp:      OutcomeFailure,
	timeout.EventExpired:   OutcomeFailure,
	bulkhead.EventRefused:  OutcomeRejected,
	ratelimit.EventRefused: OutcomeRejected,
	adaptive.EventRefused:  OutcomeRejected,
	throttle.EventRefused:  OutcomeRejected,
}

// WaitEvents are the events whose Wait is a wait that a call makes (a
// retry's backoff, time in a bulkhead's queue, for a token), which the
// exporters record in their wait duration histogram. Read only.
var WaitEvents = map[telemetry.Type]bool{
	retry.EventWaiting:           true,
	bulkhead.EventQueuedAdmitted: true,
	bulkhead.EventRefused:        true,
	ratelimit.EventWaited:        true,
}

// RecordsWait reports whether e's wait is recorded: e is one of
// [WaitEvents], its Wait is not negative nor resilience.Never, and a
// bulkhead.refused event's only if the call waited in the queue (Wait > 0).
func RecordsWait(e telemetry.Event) bool {
	if !WaitEvents[e.Type] || e.Wait == resilience.Never || e.Wait < 0 {
		return false
	}
	return e.Type != bulkhead.EventRefused || e.Wait > 0
}

// OutcomeOf is the outcome of a call made under ctx that returned err:
// success (nil), ignored (ctx is done), rejected (err matches
// resilience.ErrRefused) or failure.
func OutcomeOf(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return OutcomeSuccess
	case ctx.Err() != nil:
		return OutcomeIgnored
	case errors.Is(err, resilience.ErrRefused):
		return OutcomeRejected
	default:
		return OutcomeFailure
	}
}
