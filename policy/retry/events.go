package retry

import "github.com/f0b5b96b/resilience/telemetry"

// Kind is the kind of the retry policy's events.
const Kind telemetry.Kind = "retry"

// The events of the retry policy, reported to its observer
// ([WithObserver]). Every event carries the policy's Name; the other
// fields are zero unless listed. Their string values are stable: a
// dashboard or an alert may key on them.
const (
	// EventAttemptFailed: an attempt failed. Attempt, Err.
	EventAttemptFailed telemetry.Type = "retry.attempt_failed"
	// EventWaiting: the policy is about to wait before the next attempt.
	// Attempt (the one that failed), Err (its error), Wait (the backoff).
	EventWaiting telemetry.Type = "retry.waiting"
	// EventGaveUp: the policy stopped retrying and returns an [Error].
	// Attempt (the attempts made), Err (the Error's Reason).
	EventGaveUp telemetry.Type = "retry.gave_up"
	// EventCall: a call through the policy returned: Elapsed is its
	// duration (its attempts and the waits between them), Err the error
	// it returned (nil for a success). Emitted for every call that made an
	// attempt, successes included, and only to an observer: see
	// telemetry.WhatCall.
	EventCall telemetry.Type = "retry.call"
	// EventAttempt: an attempt returned: Attempt is its number (1 for the
	// first), Elapsed its duration, Err its error (nil for a success).
	// Emitted for every attempt, successes included: see
	// telemetry.WhatAttempt.
	EventAttempt telemetry.Type = "retry.attempt"
)
