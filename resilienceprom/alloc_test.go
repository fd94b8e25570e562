package resilienceprom_test

import (
	"context"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

// TestClosedPathAllocs: with the exporter attached (observer and
// registry), a success through a closed breaker allocates nothing.
func TestClosedPathAllocs(t *testing.T) {
	_, p := exported(t)
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() {
		if _, err := p.Do(ctx, okOp); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("closed path with the exporter attached: %v allocs per call, want 0", n)
	}
}

// TestObserveAllocs: counting an event seen before, a refusal or a wait
// (recorded), allocates nothing.
func TestObserveAllocs(t *testing.T) {
	c, _ := exported(t)
	for _, e := range []telemetry.Event{
		{Type: telemetry.BreakerRefused, Name: "b", Err: resilience.Refuse(breaker.ErrOpen, "b", time.Second), Wait: time.Second},
		{Type: telemetry.RetryWaiting, Name: "r", Attempt: 1, Err: downError{}, Wait: 100 * time.Millisecond},
	} {
		c.Observe(e)
		if n := testing.AllocsPerRun(1000, func() { c.Observe(e) }); n != 0 {
			t.Errorf("Observe(%s): %v allocs, want 0", e.Type, n)
		}
	}
}
