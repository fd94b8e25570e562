package dashboard

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Measure's layer describes itself as a pass-through layer, so that
// Policy.Bounds sees through it and Policy.Check ignores it.
func TestMeasureDescribed(t *testing.T) {
	d := New(telemetry.NewRegistry(), nil)
	want := []resilience.Layer{{Name: "measure(db)", Kind: resilience.KindOther}}
	if diff := cmp.Diff(want, Measure[int](d, "db").Layers()); diff != "" {
		t.Errorf("Layers mismatch (-want +got):\n%s", diff)
	}
}
