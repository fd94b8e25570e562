package export

import (
	"context"
	"errors"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/telemetry"
)

// MaxEventAttempt bounds the attempt numbers of the attempt duration
// events as the exporters record them: later attempts (a retry with
// resilience.Off attempts) are recorded as attempt MaxEventAttempt, so the
// number of series stays bounded.
const MaxEventAttempt = 10

// Duration is what a duration event says: a call's or an attempt's
// duration (see telemetry.WhatCall and telemetry.WhatAttempt).
type Duration int

const (
	NoDuration Duration = iota // not a duration event
	CallDuration
	AttemptDuration
)

// DurationOf says whether e is a call's duration, an attempt's or
// neither, by its type's last part: the exporters and the dashboard read
// no kind.
func DurationOf(e telemetry.Event) Duration {
	switch e.Type.What() {
	case telemetry.WhatCall:
		return CallDuration
	case telemetry.WhatAttempt:
		return AttemptDuration
	}
	return NoDuration
}

// EventAttempt is the attempt number of an attempt duration event as the
// exporters record it: e.Attempt, at most MaxEventAttempt; 0 if e has
// none.
func EventAttempt(e telemetry.Event) int {
	return min(max(e.Attempt, 0), MaxEventAttempt)
}

// OutcomeOfErr is the outcome of a call or attempt that returned err, as
// a duration event carries it (without the caller's context that
// [OutcomeOf] reads): success (nil), ignored (err matches
// context.Canceled: the caller gave up), rejected (err matches
// resilience.ErrRefused) or failure (a deadline passed included).
func OutcomeOfErr(err error) string {
	switch {
	case err == nil:
		return OutcomeSuccess
	case errors.Is(err, context.Canceled):
		return OutcomeIgnored
	case errors.Is(err, resilience.ErrRefused):
		return OutcomeRejected
	default:
		return OutcomeFailure
	}
}
