package resilienceotel_test

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resilienceotel/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// TestClosedPathAllocs: with the exporter attached (observer and
// registry), a success through a closed breaker allocates nothing.
func TestClosedPathAllocs(t *testing.T) {
	_, p := exported(t)
	exporttest.ClosedPathAllocs(t, p)
}

// TestObserveAllocs: counting an event of a series seen before, a
// refusal, a wait (recorded), a transition or a duration, allocates nothing.
func TestObserveAllocs(t *testing.T) {
	m, _ := exported(t)
	exporttest.ObserveAllocs(t, m, exporttest.Refused(), exporttest.Waiting(downError{}),
		telemetry.Event{Type: breaker.EventOpened, Name: "b", From: telemetry.StateClosed, To: telemetry.StateOpen},
		telemetry.Event{Type: retry.EventAttempt, Name: "b", Attempt: 2, Elapsed: 3 * time.Millisecond},
		telemetry.Event{Type: retry.EventCall, Name: "b", Elapsed: 5 * time.Millisecond, Err: downError{}})
}
