package snapview

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/telemetry"
)

func TestOf(t *testing.T) {
	s := telemetry.Snapshot{Kind: "k", Name: "n", State: "open", Refused: 3,
		Values: []telemetry.Value{{Name: "a", Unit: "1", Help: "h", Value: 2}}}
	want := View{Kind: "k", Name: "n", State: "open", Refused: 3, Values: map[string]float64{"a": 2}}
	if diff := cmp.Diff(want, Of(s)); diff != "" {
		t.Errorf("Of mismatch (-want +got):\n%s", diff)
	}
	defer func() {
		if recover() == nil {
			t.Error("Of of a value without help did not panic")
		}
	}()
	Of(telemetry.Snapshot{Values: []telemetry.Value{{Name: "a", Unit: "1"}}})
}
