package export

import (
	"context"
	"errors"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/adaptive"
	"github.com/f0b5b96b/resilience/policy/throttle"
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
	telemetry.BreakerFailure:   OutcomeFailure,
	telemetry.BreakerIgnored:   OutcomeIgnored,
	telemetry.BreakerRefused:   OutcomeRejected,
	telemetry.RetryGaveUp:      OutcomeFailure,
	telemetry.TimeoutExpired:   OutcomeFailure,
	telemetry.BulkheadRefused:  OutcomeRejected,
	telemetry.RateLimitRefused: OutcomeRejected,
	adaptive.EventRefused:      OutcomeRejected,
	throttle.EventRefused:      OutcomeRejected,
}

// WaitEvents are the events whose Wait is a wait that a call makes (a
// retry's backoff, time in a bulkhead's queue, for a token), which the
// exporters record in their wait duration histogram. Read only.
var WaitEvents = map[telemetry.Type]bool{
	telemetry.RetryWaiting:           true,
	telemetry.BulkheadQueuedAdmitted: true,
	telemetry.BulkheadRefused:        true,
	telemetry.RateLimitWaited:        true,
}

// RecordsWait reports whether e's wait is recorded: e is one of
// [WaitEvents], its Wait is not negative nor resilience.Never, and a
// bulkhead.refused event's only if the call waited in the queue (Wait > 0).
func RecordsWait(e telemetry.Event) bool {
	if !WaitEvents[e.Type] || e.Wait == resilience.Never || e.Wait < 0 {
		return false
	}
	return e.Type != telemetry.BulkheadRefused || e.Wait > 0
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
