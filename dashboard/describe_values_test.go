package dashboard

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/telemetry"
)

// The snapshot's "values" describe each value name of a kind once, as the
// first guard of that kind (in name order) that has it describes it:
// guards of one kind with the same list add nothing, one with a longer
// list or another list adds the names it alone has.
func TestValuesDescribedOncePerKind(t *testing.T) {
	d, _, reg := newFakeDashboard(t)
	desc := func(help string, names ...string) []telemetry.Value {
		var vs []telemetry.Value
		for _, n := range names {
			vs = append(vs, telemetry.Value{Name: n, Unit: "requests", Type: telemetry.GaugeValue, Help: help + " " + n})
		}
		return vs
	}
	guards := []struct {
		name   string
		values []telemetry.Value
	}{
		{"a", desc("a's", "limit", "in_flight")},
		{"b", desc("b's", "limit", "in_flight")},           // the same names
		{"c", desc("c's", "limit", "in_flight", "queued")}, // a longer list
		{"d", desc("d's", "in_flight")},                    // a shorter one
		{"e", desc("e's", "burst", "tokens")},              // other names
	}
	for _, g := range guards {
		f := newFake("pool", g.name)
		f.set(func(s *telemetry.Snapshot) { s.Values = g.values })
		if err := reg.Register(f); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]map[string]valueDescJSON{"pool": {}}
	for _, first := range []struct{ guard, name string }{{"a", "limit"}, {"a", "in_flight"}, {"c", "queued"}, {"e", "burst"}, {"e", "tokens"}} {
		want["pool"][first.name] = valueDescJSON{Unit: "requests", Type: "gauge", Help: first.guard + "'s " + first.name}
	}
	if diff := cmp.Diff(want, snap(t, d, false).Values); diff != "" {
		t.Errorf("values described mismatch (-want +got):\n%s", diff)
	}
}
