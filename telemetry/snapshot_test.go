package telemetry_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/telemetry"
)

func TestRegistryUnregister(t *testing.T) {
	r := telemetry.NewRegistry()
	a, b := newBreaker("a"), newBreaker("b")
	other := newBreaker("a") // same kind and name as a, not registered
	for _, g := range []telemetry.Guard{a, b} {
		if err := r.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	if r.Unregister(other) {
		t.Error("Unregister of an unregistered guard of a registered name = true, want false")
	}
	if !r.Unregister(a) {
		t.Error("Unregister(a) = false, want true")
	}
	if r.Unregister(a) {
		t.Error("second Unregister(a) = true, want false")
	}
	var names []string
	for _, s := range r.Snapshots() {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"b"}, names); diff != "" {
		t.Errorf("names after Unregister mismatch (-want +got):\n%s", diff)
	}
	// The name is free again.
	if err := r.Register(other); err != nil {
		t.Errorf("Register after Unregister = %v, want nil", err)
	}
}

// mine is a guard of a user's own kind, with a state.
type mine struct{ state string }

func (m mine) Name() string { return "cache" }
func (m mine) Snapshot() telemetry.Snapshot {
	return telemetry.Snapshot{Kind: "mycache", Name: "cache", State: m.state,
		Values: []telemetry.Value{{Name: "entries", Unit: "{entry}", Help: "Entries cached.", Value: 12}}}
}

func TestRegistryOpenGuardOfOwnKind(t *testing.T) {
	r := telemetry.NewRegistry()
	if err := r.Register(mine{telemetry.StateOpen}); err != nil {
		t.Fatal(err)
	}
	open := r.OpenBreakers()
	if len(open) != 1 || open[0].Kind != "mycache" || !open[0].Open() {
		t.Fatalf("OpenBreakers() = %+v, want the open guard of kind mycache", open)
	}
	if v, ok := open[0].Value("entries"); !ok || v != 12 {
		t.Errorf("Value(entries) = %v, %v, want 12, true", v, ok)
	}
	if v, ok := open[0].Value("nope"); ok || v != 0 {
		t.Errorf("Value(nope) = %v, %v, want 0, false", v, ok)
	}
}

func TestSnapshotOpen(t *testing.T) {
	for state, want := range map[string]bool{telemetry.StateOpen: true, telemetry.StateHalfOpen: false, telemetry.StateClosed: false, "": false} {
		if got := (telemetry.Snapshot{State: state}).Open(); got != want {
			t.Errorf("Snapshot{State: %q}.Open() = %v, want %v", state, got, want)
		}
	}
}

func TestValueTypeString(t *testing.T) {
	for typ, want := range map[telemetry.ValueType]string{telemetry.GaugeValue: "gauge", telemetry.CounterValue: "counter", 7: "ValueType(7)"} {
		if got := typ.String(); got != want {
			t.Errorf("ValueType(%d).String() = %q, want %q", uint8(typ), got, want)
		}
	}
}

func TestAddTop(t *testing.T) {
	var top []telemetry.KeyStat
	for i, n := range []uint64{3, 0, 9, 1, 9, 4, 2, 7, 5} {
		top = telemetry.AddTop(top, telemetry.KeyStat{Key: fmt.Sprint("k", i), Refused: n})
	}
	want := []telemetry.KeyStat{{Key: "k2", Refused: 9}, {Key: "k4", Refused: 9}, {Key: "k7", Refused: 7}, {Key: "k8", Refused: 5}, {Key: "k5", Refused: 4}}
	if diff := cmp.Diff(want, top); diff != "" {
		t.Errorf("AddTop mismatch (-want +got):\n%s", diff)
	}
}

// liar is a guard whose snapshot names another name than Name.
type liar struct{}

func (liar) Name() string                 { return "real" }
func (liar) Snapshot() telemetry.Snapshot { return telemetry.Snapshot{Kind: "mine", Name: "other"} }

// A guard is registered, and listed, under its Name.
func TestRegistryNamesGuardsByName(t *testing.T) {
	r := telemetry.NewRegistry()
	if err := r.Register(liar{}); err != nil {
		t.Fatal(err)
	}
	if got := r.Snapshots(); len(got) != 1 || got[0].Name != "real" {
		t.Errorf("Snapshots() = %+v, want the guard under its Name, real", got)
	}
	if !r.Unregister(liar{}) {
		t.Error("Unregister(liar) = false, want true")
	}
}
