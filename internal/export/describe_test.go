package export

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
)

// Measure's layers describe themselves as pass-through layers, so that
// Policy.Bounds sees through them and Policy.Check ignores them.
func TestMeasureDescribed(t *testing.T) {
	var r recorder
	call, attempt := Measure[int](clock.NewFake(), "x", 2, &r)
	want := []resilience.Layer{{Name: "measure(x)", Kind: resilience.KindOther}, {Name: "measure-attempt(x)", Kind: resilience.KindOther}}
	if diff := cmp.Diff(want, resilience.Then(call, attempt).Layers()); diff != "" {
		t.Errorf("Layers mismatch (-want +got):\n%s", diff)
	}
}
