package telemetry_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Pipelines come in name order, however many there are.
func TestRegistryPipelinesInNameOrder(t *testing.T) {
	r := telemetry.NewRegistry()
	var want []telemetry.Pipeline
	for i := range 16 {
		name := fmt.Sprintf("p%02d", (i*7)%16) // registered out of order
		if err := r.RegisterPipeline(name, resilience.Policy[int]{}); err != nil {
			t.Fatal(err)
		}
		want = append(want, telemetry.Pipeline{Name: name, Chain: "identity"})
	}
	slices.SortFunc(want, func(a, b telemetry.Pipeline) int { return strings.Compare(a.Name, b.Name) })
	if diff := cmp.Diff(want, r.Pipelines()); diff != "" {
		t.Errorf("Pipelines() mismatch (-want +got):\n%s", diff)
	}
}

// A key with no refusals is never added to Top; one with a single
// refusal is.
func TestAddTopLeavesOutKeysWithoutRefusals(t *testing.T) {
	if got := telemetry.AddTop(nil, telemetry.KeyStat{Key: "quiet"}); got != nil {
		t.Errorf("AddTop of a key without refusals = %v, want nil", got)
	}
	want := []telemetry.KeyStat{{Key: "once", Refused: 1}}
	if diff := cmp.Diff(want, telemetry.AddTop(nil, want[0])); diff != "" {
		t.Errorf("AddTop of a key with one refusal mismatch (-want +got):\n%s", diff)
	}
}
