package dashboard

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

// An attempt's duration event counts as a call of its name's tile with the
// outcome its error gives: a success; a failure; a refusal (an error
// matching resilience.ErrRefused: no latency, no error); the caller's
// cancellation (an error matching context.Canceled: a call only).
func TestAttemptEventOutcomes(t *testing.T) {
	d, _, reg := newFakeDashboard(t)
	for _, err := range []error{
		nil,
		errBoom,
		fmt.Errorf("attempt: %w", bulkhead.ErrFull),
		fmt.Errorf("attempt: %w", context.Canceled),
		context.Canceled,
	} {
		within(t, fmt.Sprintf("the attempt event of %v to be observed", err), func() struct{} {
			reg.Observe(telemetry.Event{Type: retry.EventAttempt, Name: "prices", Elapsed: 3 * time.Millisecond, Err: err})
			return struct{}{}
		})
	}
	if !errors.Is(bulkhead.ErrFull, resilience.ErrRefused) {
		t.Fatal("bulkhead.ErrFull is not a refusal")
	}
	s := snap(t, d, false) // the first snapshot: the counts from zero over an Interval
	if len(s.Guards) != 1 {
		t.Fatalf("tiles %+v, want one: prices", s.Guards)
	}
	g := s.Guards[0]
	got := []*float64{g.CallsPerSec, g.ErrorsPerSec, g.RefusalsPerSec, g.ErrorPct}
	if diff := cmp.Diff([]*float64{ptr(5), ptr(1), ptr(1), ptr(50)}, got); diff != "" {
		t.Errorf("calls/s, errors/s, refusals/s, error %% mismatch (-want +got):\n%s", diff)
	}
}
