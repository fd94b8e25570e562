package dashboard

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/telemetry"
)

// newCounted returns a dashboard on a fake clock reading events from a
// Counter of its own.
func newCounted(t *testing.T) (*Dashboard, *clock.Fake, *telemetry.Registry, *telemetry.Counter) {
	t.Helper()
	f := clock.NewFake()
	events := new(telemetry.Counter)
	reg := telemetry.NewRegistry()
	return New(reg, &Options{Counter: events, Clock: f}), f, reg, events
}

func register(t *testing.T, reg *telemetry.Registry, g telemetry.Guard) {
	t.Helper()
	if err := reg.Register(g); err != nil {
		t.Fatal(err)
	}
}

// A tile whose guards report no failure ratio, and that has no attempt
// durations, has no source of errors: errors/s and its history are null,
// with a Counter as without one.
func TestErrorsWithoutASourceAreNull(t *testing.T) {
	for _, counted := range []bool{false, true} {
		f := clock.NewFake()
		reg := telemetry.NewRegistry()
		o := &Options{Clock: f}
		if counted {
			o.Counter = new(telemetry.Counter)
		}
		d := New(reg, o)
		register(t, reg, newFake(bulkhead.Kind, "db"))
		g := snap(t, d, true).Guards[0]
		if g.ErrorsPerSec != nil || g.History.Errors != nil {
			t.Errorf("a bulkhead only (Counter: %v): errors/s %v, history of errors %v; want null", counted, g.ErrorsPerSec, g.History.Errors)
		}
	}
}

// The failure events of a breaker's name give its errors per second over
// each snapshot's time: 2 in the first second, 1 in the next.
func TestFailureEventRatesAcrossSnapshots(t *testing.T) {
	d, f, reg, events := newCounted(t)
	g := newFake(breaker.Kind, "pay")
	g.set(func(s *telemetry.Snapshot) { s.Values = values("failure_ratio", 0.5, "window_calls", 4) })
	register(t, reg, g)
	fail := func(n int) {
		for range n {
			events.Observe(telemetry.Event{Type: breaker.EventFailure, Name: "pay"})
		}
	}
	fail(2)
	snap(t, d, false)
	f.Advance(time.Second)
	fail(1)
	if diff := cmp.Diff(ptr(1), snap(t, d, false).Guards[0].ErrorsPerSec); diff != "" {
		t.Errorf("errors/s in the second second mismatch (-want +got):\n%s", diff)
	}
}

// A guard's failure ratio is its error % as soon as its window has one
// call.
func TestErrorPctOfAWindowOfOneCall(t *testing.T) {
	d, _, reg := newFakeDashboard(t)
	g := newFake(breaker.Kind, "pay")
	g.set(func(s *telemetry.Snapshot) { s.Values = values("failure_ratio", 1, "window_calls", 1) })
	register(t, reg, g)
	if diff := cmp.Diff(ptr(100), snap(t, d, false).Guards[0].ErrorPct); diff != "" {
		t.Errorf("error %% mismatch (-want +got):\n%s", diff)
	}
}

// One call in the window is enough for an error %.
func TestErrorPctOfOneMeasuredCall(t *testing.T) {
	d, f, _ := newFakeDashboard(t)
	_, _ = Measure[int](d, "db").Do(t.Context(), op(f, 0, nil))
	if diff := cmp.Diff(ptr(0), snap(t, d, false).Guards[0].ErrorPct); diff != "" {
		t.Errorf("error %% after one success mismatch (-want +got):\n%s", diff)
	}
}

// A guard replaced by one with fewer refusals (say, a service that made
// its breaker anew) has a refusal rate of 0, not a negative one.
func TestRefusalsOfAGuardThatCountsFewer(t *testing.T) {
	d, f, reg := newFakeDashboard(t)
	g := newFake(bulkhead.Kind, "db")
	g.set(func(s *telemetry.Snapshot) { s.Refused = 10 })
	register(t, reg, g)
	snap(t, d, false)
	g.set(func(s *telemetry.Snapshot) { s.Refused = 3 })
	f.Advance(time.Second)
	if diff := cmp.Diff(ptr(0), snap(t, d, false).Guards[0].RefusalsPerSec); diff != "" {
		t.Errorf("refusals/s mismatch (-want +got):\n%s", diff)
	}
}

// "values" describes the kinds of the guards of this snapshot: a kind
// whose last guard was unregistered is no longer listed.
func TestValuesOfAKindNoLongerRegistered(t *testing.T) {
	d, f, reg := newFakeDashboard(t)
	g := newFake(bulkhead.Kind, "db")
	g.set(func(s *telemetry.Snapshot) { s.Values = values("limit", 10) })
	register(t, reg, g)
	if _, ok := snap(t, d, false).Values["bulkhead"]; !ok {
		t.Fatal(`"values" does not describe the registered bulkhead`)
	}
	reg.Unregister(g)
	f.Advance(time.Second)
	if v, ok := snap(t, d, false).Values["bulkhead"]; ok {
		t.Errorf(`"values" describes bulkhead as %v with no bulkhead registered`, v)
	}
}
