package export

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/adaptive"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/throttle"
	"github.com/f0b5b96b/resilience/telemetry"
)

// TestOutcomeOf: nil is a success, an error once the context is done is
// ignored, a refusal (wrapped too) rejected, any other error a failure.
func TestOutcomeOf(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	bg := context.Background()
	for _, c := range []struct {
		name string
		ctx  context.Context
		err  error
		want string
	}{
		{"nil", bg, nil, OutcomeSuccess},
		{"nil, ctx done", done, nil, OutcomeSuccess},
		{"error", bg, errors.New("x"), OutcomeFailure},
		{"ctx done", done, errors.New("x"), OutcomeIgnored},
		{"refused", bg, fmt.Errorf("w: %w", bulkhead.ErrFull), OutcomeRejected},
		{"refused, ctx done", done, bulkhead.ErrFull, OutcomeIgnored},
	} {
		if got := OutcomeOf(c.ctx, c.err); got != c.want {
			t.Errorf("%s: OutcomeOf = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestRecordsWait: only the wait events' waits are recorded, not a
// negative one nor resilience.Never, and a bulkhead.refused event's only
// if it waited.
func TestRecordsWait(t *testing.T) {
	for _, c := range []struct {
		e    telemetry.Event
		want bool
	}{
		{telemetry.Event{Type: retry.EventWaiting, Wait: time.Second}, true},
		{telemetry.Event{Type: retry.EventWaiting}, true},
		{telemetry.Event{Type: retry.EventWaiting, Wait: -1}, false},
		{telemetry.Event{Type: retry.EventWaiting, Wait: resilience.Never}, false},
		{telemetry.Event{Type: bulkhead.EventQueuedAdmitted, Wait: time.Millisecond}, true},
		{telemetry.Event{Type: bulkhead.EventRefused, Wait: time.Millisecond}, true},
		{telemetry.Event{Type: bulkhead.EventRefused}, false},
		{telemetry.Event{Type: ratelimit.EventWaited, Wait: time.Millisecond}, true},
		{telemetry.Event{Type: ratelimit.EventRefused, Wait: time.Millisecond}, false},
		{telemetry.Event{Type: breaker.EventOpened, Wait: time.Millisecond}, false},
	} {
		if got := RecordsWait(c.e); got != c.want {
			t.Errorf("RecordsWait(%s, wait %v) = %v, want %v", c.e.Type, c.e.Wait, got, c.want)
		}
	}
}

// TestEventOutcomes: every event that is a call's outcome has one of the
// outcomes a call can have but success.
func TestEventOutcomes(t *testing.T) {
	for typ, o := range EventOutcomes {
		switch o {
		case OutcomeFailure, OutcomeRejected, OutcomeIgnored:
		default:
			t.Errorf("EventOutcomes[%s] = %q", typ, o)
		}
	}
}

// A policy's own refusal event counts as a call refused, as the built-in
// ones do.
func TestOwnRefusalIsRejected(t *testing.T) {
	for _, typ := range []telemetry.Type{adaptive.EventRefused, throttle.EventRefused} {
		if got := EventOutcomes[typ]; got != OutcomeRejected {
			t.Errorf("EventOutcomes[%s] = %q, want %q", typ, got, OutcomeRejected)
		}
	}
}
