package resilienceprom

import (
	"context"
	"errors"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/telemetry"
)

// The values of the outcome label.
const (
	outcomeSuccess  = "success"  // the call returned no error
	outcomeFailure  = "failure"  // it failed (and was not refused)
	outcomeRejected = "rejected" // a guard refused it
	outcomeIgnored  = "ignored"  // neither: the caller gave up, or a breaker ignored it
)

// eventOutcomes are the events that are the outcome of a call through a
// policy, and so are counted by resilience_calls_total as well as by
// resilience_events_total.
var eventOutcomes = map[telemetry.Type]string{
	telemetry.BreakerFailure:    outcomeFailure,
	telemetry.BreakerIgnored:    outcomeIgnored,
	telemetry.BreakerRefused:    outcomeRejected,
	telemetry.RetryGaveUp:       outcomeFailure,
	telemetry.TimeoutExpired:    outcomeFailure,
	telemetry.BulkheadRejected:  outcomeRejected,
	telemetry.RateLimitRejected: outcomeRejected,
}

// waitEvents are the events whose Wait is a wait that a call makes (a
// retry's backoff, time in a bulkhead's queue, for a token), which
// resilience_wait_duration_seconds records.
var waitEvents = map[telemetry.Type]bool{
	telemetry.RetryWaiting:           true,
	telemetry.BulkheadQueuedAdmitted: true,
	telemetry.BulkheadRejected:       true,
	telemetry.RateLimitWaited:        true,
}

// recordsWait reports whether e's wait is recorded: not a wait of
// resilience.Never, and a bulkhead.rejected event's only if the call
// waited in the queue.
func recordsWait(e telemetry.Event) bool {
	if !waitEvents[e.Type] || e.Wait == resilience.Never || e.Wait < 0 {
		return false
	}
	return e.Type != telemetry.BulkheadRejected || e.Wait > 0
}

// outcomeOf is the outcome of a call made under ctx that returned err.
func outcomeOf(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return outcomeSuccess
	case ctx.Err() != nil:
		return outcomeIgnored
	case errors.Is(err, resilience.ErrRefused):
		return outcomeRejected
	default:
		return outcomeFailure
	}
}
