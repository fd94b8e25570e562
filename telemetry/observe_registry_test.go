package telemetry_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

// A Registry passes each event it observes to every observer added to it,
// in order, until it is removed; with none, Observe does nothing.
func TestRegistryObserveFansOut(t *testing.T) {
	reg := telemetry.NewRegistry()
	reg.Observe(telemetry.Event{Type: retry.EventCall, Name: "x"}) // no observer: nothing to do

	var a, b telemetry.Counter
	var order []string
	tag := telemetry.ObserverFunc(func(e telemetry.Event) { order = append(order, e.Name) })
	reg.AddObserver(&a)
	reg.AddObserver(tag)
	reg.AddObserver(&b)
	reg.Observe(telemetry.Event{Type: retry.EventAttempt, Name: "prices"})
	if a.Count("prices", retry.EventAttempt) != 1 || b.Count("prices", retry.EventAttempt) != 1 {
		t.Fatalf("counts after one event: a %v, b %v; want 1 each", a.Counts(), b.Counts())
	}
	if diff := cmp.Diff([]string{"prices"}, order); diff != "" {
		t.Fatalf("func observer mismatch (-want +got):\n%s", diff)
	}

	if !reg.RemoveObserver(&a) {
		t.Fatal("RemoveObserver(&a) = false, want true")
	}
	if reg.RemoveObserver(&a) {
		t.Fatal("second RemoveObserver(&a) = true, want false")
	}
	if reg.RemoveObserver(tag) {
		t.Fatal("RemoveObserver of a func = true, want false (funcs are not comparable)")
	}
	reg.Observe(telemetry.Event{Type: retry.EventAttempt, Name: "prices"})
	if got := a.Count("prices", retry.EventAttempt); got != 1 {
		t.Errorf("removed observer counted %d, want 1", got)
	}
	if got := b.Count("prices", retry.EventAttempt); got != 2 {
		t.Errorf("kept observer counted %d, want 2", got)
	}
}

func TestRegistryAddObserverPanics(t *testing.T) {
	reg := telemetry.NewRegistry()
	for name, o := range map[string]telemetry.Observer{"nil": nil, "itself": reg} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("AddObserver(%s) did not panic", name)
				}
			}()
			reg.AddObserver(o)
		}()
	}
}

func TestRegistryObserveDoesNotAllocate(t *testing.T) {
	reg := telemetry.NewRegistry()
	e := telemetry.Event{Type: retry.EventAttempt, Name: "prices"}
	if n := testing.AllocsPerRun(100, func() { reg.Observe(e) }); n != 0 {
		t.Errorf("Observe without observers: %v allocs, want 0", n)
	}
	var c telemetry.Counter
	reg.AddObserver(&c)
	reg.Observe(e) // the count's first use allocates it
	if n := testing.AllocsPerRun(100, func() { reg.Observe(e) }); n != 0 {
		t.Errorf("Observe to a Counter: %v allocs, want 0", n)
	}
}

func TestTypeWhat(t *testing.T) {
	for typ, want := range map[telemetry.Type]string{
		retry.EventCall: telemetry.WhatCall, retry.EventAttempt: telemetry.WhatAttempt,
		"breaker.opened": "opened", "nodot": "nodot", "a.b.c": "b.c",
	} {
		if got := typ.What(); got != want {
			t.Errorf("Type(%q).What() = %q, want %q", typ, got, want)
		}
	}
}
