package export

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

func TestDurationOf(t *testing.T) {
	for typ, want := range map[telemetry.Type]Duration{
		retry.EventCall: CallDuration, retry.EventAttempt: AttemptDuration,
		"mine.call": CallDuration, "mine.attempt": AttemptDuration,
		retry.EventAttemptFailed: NoDuration, breaker.EventOpened: NoDuration,
	} {
		if got := DurationOf(telemetry.Event{Type: typ}); got != want {
			t.Errorf("DurationOf(%s) = %v, want %v", typ, got, want)
		}
	}
}

func TestEventAttemptIsBounded(t *testing.T) {
	for in, want := range map[int]int{-1: 0, 0: 0, 1: 1, MaxEventAttempt: MaxEventAttempt, MaxEventAttempt + 5: MaxEventAttempt} {
		if got := EventAttempt(telemetry.Event{Attempt: in}); got != want {
			t.Errorf("EventAttempt(%d) = %d, want %d", in, got, want)
		}
	}
}

func TestOutcomeOfErr(t *testing.T) {
	refused := fmt.Errorf("x: %w", resilience.ErrRefused)
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, OutcomeSuccess},
		{fmt.Errorf("gave up: %w", context.Canceled), OutcomeIgnored},
		{refused, OutcomeRejected},
		{context.DeadlineExceeded, OutcomeFailure},
		{errors.New("boom"), OutcomeFailure},
	} {
		if got := OutcomeOfErr(tc.err); got != tc.want {
			t.Errorf("OutcomeOfErr(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
