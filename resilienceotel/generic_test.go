package resilienceotel_test

import (
	"testing"

	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/resilienceotel/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// A guard of one's own, registered after New, is exported from what it
// describes: from the collection after the first that saw it, an
// instrument per value named from its kind and name, with its unit, its
// help as description and its type; its state as resilience.guard.state.
func TestGuardOfOwnKind(t *testing.T) {
	reg := telemetry.NewRegistry()
	m, reader := newMetrics(t, resilienceotel.WithRegistry(reg))
	if err := reg.Register(exporttest.FakeGuard{S: telemetry.Snapshot{Kind: "my-cache", Name: "users", State: "warming", Refused: 3,
		Values: []telemetry.Value{
			{Name: "entries", Unit: "{entry}", Help: "Entries cached now.", Value: 12},
			{Name: "hits", Unit: "{hit}", Type: telemetry.CounterValue, Help: "Hits since made.", Value: 40},
			{Name: "age", Unit: "s", Help: "Age of the oldest entry.", Value: 1.5},
		}}}); err != nil {
		t.Fatal(err)
	}
	first := collect(t, reader)
	if _, ok := first["resilience.my-cache.entries"]; ok {
		t.Errorf("the first collection that saw the guard has its values; want them from the next")
	}
	users := pname("users")
	assertData(t, first, "resilience.guard.state", igauge(pt[int64](1, ptype("my-cache"), users, state("warming"))))
	m.WaitValues(t)
	for range 2 { // each collection observes each value once
		got := collect(t, reader)
		assertData(t, got, "resilience.my-cache.entries", fgauge(pt(12.0, users)))
		assertData(t, got, "resilience.my-cache.hits", fcounter(pt(40.0, users)))
		assertData(t, got, "resilience.my-cache.age", fgauge(pt(1.5, users)))
		assertData(t, got, "resilience.guard.refused", counter(pt[int64](3, ptype("my-cache"), users)))
		for name, unit := range map[string]string{"resilience.my-cache.entries": "{entry}", "resilience.my-cache.hits": "{hit}", "resilience.my-cache.age": "s"} {
			if got[name].Unit != unit || got[name].Description == "" {
				t.Errorf("%s: unit %q, description %q; want unit %q and the value's help", name, got[name].Unit, got[name].Description, unit)
			}
		}
		if d := got["resilience.my-cache.age"].Description; d != "Age of the oldest entry" {
			t.Errorf("description %q, want the help without its period", d)
		}
	}
	if err := closeMetrics(t, m); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, reader); len(got) != 0 {
		t.Errorf("after Close, the collection has %v; want nothing", names(got))
	}
}
