package exporttest

import (
	"errors"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

// AllTypes returns every event type of package telemetry's table, with
// the fields that table gives it: as the policies emit them (breaker.evicted
// as a breaker.Keyed does when it forgets the open breaker of key "k"),
// and as the policies that do not emit yet (timeout, hedge, bulkhead, rate
// limiter, fallback) will; down is the dependency's error in the retry and
// fallback events. The events have no Name: the caller sets it. Each call
// returns a new slice.
func AllTypes(down error) []telemetry.Event {
	return []telemetry.Event{
		{Type: telemetry.BreakerOpened, From: telemetry.StateClosed, To: telemetry.StateOpen, Wait: 30 * time.Second},
		{Type: telemetry.BreakerHalfOpened, From: telemetry.StateOpen, To: telemetry.StateHalfOpen},
		{Type: telemetry.BreakerClosed, From: telemetry.StateHalfOpen, To: telemetry.StateClosed},
		{Type: telemetry.BreakerRefused, Err: resilience.Refuse(breaker.ErrOpen, "x", time.Second), Wait: time.Second},
		{Type: telemetry.BreakerFailure},
		{Type: telemetry.BreakerIgnored, Err: errors.New("ignored")},
		{Type: telemetry.BreakerEvicted, Key: "k", From: telemetry.StateOpen},
		{Type: telemetry.RetryAttemptFailed, Attempt: 1, Err: down},
		{Type: telemetry.RetryWaiting, Attempt: 1, Err: down, Wait: 200 * time.Millisecond},
		{Type: telemetry.RetryGaveUp, Attempt: 3, Err: retry.ErrAttempts},
		{Type: telemetry.RetryAttempt, Attempt: 1, Elapsed: 20 * time.Millisecond},
		{Type: telemetry.RetryCall, Elapsed: 250 * time.Millisecond},
		{Type: telemetry.TimeoutExpired, Elapsed: time.Second},
		{Type: telemetry.TimeoutAbandoned, Elapsed: time.Second},
		{Type: telemetry.HedgeLaunched, Attempt: 2, Elapsed: 50 * time.Millisecond},
		{Type: telemetry.HedgeWon, Attempt: 2, Elapsed: 60 * time.Millisecond},
		{Type: telemetry.HedgeLosersCancelled, Attempt: 1},
		{Type: telemetry.BulkheadQueuedAdmitted, Wait: 30 * time.Millisecond},
		{Type: telemetry.BulkheadRefused, Err: resilience.Refuse(bulkhead.ErrQueueTimeout, "x", -1), Wait: 100 * time.Millisecond},
		{Type: telemetry.RateLimitRefused, Err: resilience.Refuse(ratelimit.ErrLimited, "x", 2*time.Second), Wait: 2 * time.Second, Key: "k"},
		{Type: telemetry.RateLimitWaited, Wait: 10 * time.Millisecond, Key: "k"},
		{Type: telemetry.FallbackUsed, Err: down},
	}
}

// Refused is a refusal by the open breaker "b", with a hint of a second:
// an error.type read from its sentinel.
func Refused() telemetry.Event {
	return telemetry.Event{Type: telemetry.BreakerRefused, Name: "b", Err: resilience.Refuse(breaker.ErrOpen, "b", time.Second), Wait: time.Second}
}

// Waiting is retry "r" waiting 100ms after its first attempt failed with
// down: a wait the exporter records.
func Waiting(down error) telemetry.Event {
	return telemetry.Event{Type: telemetry.RetryWaiting, Name: "r", Attempt: 1, Err: down, Wait: 100 * time.Millisecond}
}
