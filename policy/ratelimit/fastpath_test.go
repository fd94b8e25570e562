package ratelimit_test

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/telemetry"
)

// A refusal by Allow on the real clock (its shortest path, with
// nanosecond units) is reported with no Retry-After: Allow gives the
// caller none, as the general step does not either.
func TestAllowRefusalOnRealClockHasNoWait(t *testing.T) {
	var events []telemetry.Event
	l := ratelimit.New(ratelimit.Every(time.Hour), 1, ratelimit.WithObserver(telemetry.ObserverFunc(func(e telemetry.Event) {
		events = append(events, e)
	})))
	if !l.Allow() {
		t.Fatal("Allow refused the first event of a full bucket")
	}
	if l.Allow() {
		t.Fatal("Allow admitted a second event within the hour")
	}
	if len(events) != 1 || events[0].Type != ratelimit.EventRefused {
		t.Fatalf("events = %v, want one %v", events, ratelimit.EventRefused)
	}
	if events[0].Wait != 0 {
		t.Errorf("refusal event Wait = %v, want 0 (Allow gives no Retry-After)", events[0].Wait)
	}
}

// On the real clock, a burst so large for the rate that a unit is no
// longer a nanosecond (1<<52 events, one every 2^40ns: each event is 2^9
// units, a unit 2^31ns) still refills at the configured rate: once
// AllowN(Burst) has emptied the bucket, no Allow passes until the next
// token, 2^40ns (18 minutes) later. Allow must not read the clock as
// units.
func TestAllowRealClockLoweredUnits(t *testing.T) {
	const burst = 1 << 52
	l := ratelimit.New(1e9/(1<<40), burst)
	if !l.AllowN(burst) {
		t.Fatal("AllowN(Burst) refused on a full bucket")
	}
	for i := range 1000 {
		if l.Allow() {
			t.Fatalf("Allow %d admitted an event on an empty bucket that refills one event every 2^40ns", i)
		}
	}
}
