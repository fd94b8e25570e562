package telemetry_test

import (
	"testing"

	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

// A registry may observe another: only adding a registry to itself is
// refused. Events reach the other registry's observers.
func TestRegistryObservesAnotherRegistry(t *testing.T) {
	outer, inner := telemetry.NewRegistry(), telemetry.NewRegistry()
	var c telemetry.Counter
	inner.AddObserver(&c)
	outer.AddObserver(inner)
	outer.Observe(telemetry.Event{Type: retry.EventGaveUp, Name: "db"})
	if got := c.Count("db", retry.EventGaveUp); got != 1 {
		t.Errorf("the inner registry's counter counted %d, want 1", got)
	}
}

// RemoveObserver reports false on a registry with no observers, removes
// an observer wherever it is in the list, and keeps the others in order.
func TestRegistryRemoveObserver(t *testing.T) {
	r := telemetry.NewRegistry()
	var a telemetry.Counter
	if r.RemoveObserver(&a) {
		t.Error("RemoveObserver on a registry without observers = true, want false")
	}
	var b, c telemetry.Counter
	r.AddObserver(&a)
	r.AddObserver(&b)
	r.AddObserver(&c)
	if !r.RemoveObserver(&b) {
		t.Fatal("RemoveObserver(&b) = false, want true")
	}
	if r.RemoveObserver(&b) {
		t.Error("second RemoveObserver(&b) = true, want false")
	}
	r.Observe(telemetry.Event{Type: retry.EventGaveUp, Name: "db"})
	for name, n := range map[string]uint64{"a": a.Count("db", retry.EventGaveUp), "b": b.Count("db", retry.EventGaveUp), "c": c.Count("db", retry.EventGaveUp)} {
		want := uint64(1)
		if name == "b" {
			want = 0
		}
		if n != want {
			t.Errorf("observer %s counted %d, want %d", name, n, want)
		}
	}
}
