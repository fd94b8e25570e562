package exporttest

import (
	"errors"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/telemetry"
)

// AllTypes returns every event type of the built-in policies (the Event
// constants of breaker, retry, timeout, hedge, bulkhead, ratelimit and
// the fallback's), with the fields their doc comments give them: as the policies emit them (breaker.evicted
// as a breaker.Keyed does when it forgets the open breaker of key "k"),
// and as the policies that do not emit yet (timeout, hedge, bulkhead, rate
// limiter, fallback) will; down is the dependency's error in the retry and
// fallback events. The events have no Name: the caller sets it. Each call
// returns a new slice.
func AllTypes(down error) []telemetry.Event {
	return []telemetry.Event{
		{Type: breaker.EventOpened, From: telemetry.StateClosed, To: telemetry.StateOpen, Wait: 30 * time.Second},
		{Type: breaker.EventHalfOpened, From: telemetry.StateOpen, To: telemetry.StateHalfOpen},
		{Type: breaker.EventClosed, From: telemetry.StateHalfOpen, To: telemetry.StateClosed},
		{Type: breaker.EventRefused, Err: resilience.Refuse(breaker.ErrOpen, "x", time.Second), Wait: time.Second},
		{Type: breaker.EventFailure},
		{Type: breaker.EventIgnored, Err: errors.New("ignored")},
		{Type: breaker.EventEvicted, Key: "k", From: telemetry.StateOpen},
		{Type: retry.EventAttemptFailed, Attempt: 1, Err: down},
		{Type: retry.EventWaiting, Attempt: 1, Err: down, Wait: 200 * time.Millisecond},
		{Type: retry.EventGaveUp, Attempt: 3, Err: retry.ErrAttempts},
		{Type: retry.EventAttempt, Attempt: 1, Elapsed: 20 * time.Millisecond},
		{Type: retry.EventCall, Elapsed: 250 * time.Millisecond},
		{Type: timeout.EventExpired, Elapsed: time.Second},
		{Type: timeout.EventAbandoned, Elapsed: time.Second},
		{Type: hedge.EventLaunched, Attempt: 2, Elapsed: 50 * time.Millisecond},
		{Type: hedge.EventWon, Attempt: 2, Elapsed: 60 * time.Millisecond},
		{Type: hedge.EventLosersCancelled, Attempt: 1},
		{Type: bulkhead.EventQueuedAdmitted, Wait: 30 * time.Millisecond},
		{Type: bulkhead.EventRefused, Err: resilience.Refuse(bulkhead.ErrQueueTimeout, "x", -1), Wait: 100 * time.Millisecond},
		{Type: ratelimit.EventRefused, Err: resilience.Refuse(ratelimit.ErrLimited, "x", 2*time.Second), Wait: 2 * time.Second, Key: "k"},
		{Type: ratelimit.EventWaited, Wait: 10 * time.Millisecond, Key: "k"},
		{Type: resilience.EventFallbackUsed, Err: down},
	}
}

// Refused is a refusal by the open breaker "b", with a hint of a second:
// an error.type read from its sentinel.
func Refused() telemetry.Event {
	return telemetry.Event{Type: breaker.EventRefused, Name: "b", Err: resilience.Refuse(breaker.ErrOpen, "b", time.Second), Wait: time.Second}
}

// Waiting is retry "r" waiting 100ms after its first attempt failed with
// down: a wait the exporter records.
func Waiting(down error) telemetry.Event {
	return telemetry.Event{Type: retry.EventWaiting, Name: "r", Attempt: 1, Err: down, Wait: 100 * time.Millisecond}
}
