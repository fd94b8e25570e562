package exporttest_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/telemetry"
)

// TestAllTypesFields: the events of AllTypes carry the fields their types'
// doc comments give them, set: an attempt's number (from 1), a wait, a
// duration run. A refusal's hint is its Wait where the guard knows when to
// come back (the breaker, the rate limiter), and a bulkhead's queue
// timeout has none.
func TestAllTypesFields(t *testing.T) {
	attempt := map[telemetry.Type]bool{
		retry.EventAttemptFailed: true, retry.EventWaiting: true, retry.EventGaveUp: true, retry.EventAttempt: true,
		hedge.EventLaunched: true, hedge.EventWon: true, hedge.EventLosersCancelled: true,
	}
	wait := map[telemetry.Type]bool{
		breaker.EventOpened: true, breaker.EventRefused: true, retry.EventWaiting: true,
		bulkhead.EventQueuedAdmitted: true, bulkhead.EventRefused: true,
		ratelimit.EventRefused: true, ratelimit.EventWaited: true,
	}
	elapsed := map[telemetry.Type]bool{
		retry.EventAttempt: true, retry.EventCall: true, timeout.EventExpired: true, timeout.EventAbandoned: true,
		hedge.EventLaunched: true, hedge.EventWon: true,
	}
	for _, e := range exporttest.AllTypes(downError{}) {
		if attempt[e.Type] != (e.Attempt >= 1) {
			t.Errorf("%s: Attempt %d, want one from 1: %v", e.Type, e.Attempt, attempt[e.Type])
		}
		if wait[e.Type] != (e.Wait > 0) {
			t.Errorf("%s: Wait %v, want one > 0: %v", e.Type, e.Wait, wait[e.Type])
		}
		if elapsed[e.Type] != (e.Elapsed > 0) {
			t.Errorf("%s: Elapsed %v, want one > 0: %v", e.Type, e.Elapsed, elapsed[e.Type])
		}
		var refused *resilience.RefusedError
		if !errors.As(e.Err, &refused) {
			continue
		}
		hint, ok := resilience.RetryAfter(e.Err)
		switch want := e.Type != bulkhead.EventRefused; {
		case ok != want:
			t.Errorf("%s: a hint %v (%v), want one: %v", e.Type, hint, ok, want)
		case ok && hint != e.Wait:
			t.Errorf("%s: a hint of %v, want its Wait, %v", e.Type, hint, e.Wait)
		}
	}
}

// TestRefusedAndWaiting: the two single events are what their doc
// comments say.
func TestRefusedAndWaiting(t *testing.T) {
	r := exporttest.Refused()
	if hint, ok := resilience.RetryAfter(r.Err); r.Type != breaker.EventRefused || r.Name != "b" ||
		!errors.Is(r.Err, breaker.ErrOpen) || !ok || hint != time.Second || r.Wait != time.Second {
		t.Errorf("Refused() = %+v (hint %v, %v), want breaker.refused by b, ErrOpen with a hint of 1s", r, hint, ok)
	}
	want := telemetry.Event{Type: retry.EventWaiting, Name: "r", Attempt: 1, Err: downError{}, Wait: 100 * time.Millisecond}
	if diff := cmp.Diff(want, exporttest.Waiting(downError{}), cmpopts.EquateErrors()); diff != "" {
		t.Errorf("Waiting mismatch (-want +got):\n%s", diff)
	}
}
