package pipeline_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/pipeline"
	"github.com/f0b5b96b/resilience/telemetry"
)

// WithRegistry registers the guards of every kind, adaptive limiters and
// throttlers too.
func TestBuildRegistersEveryKindOfGuard(t *testing.T) {
	r := telemetry.NewRegistry()
	if _, err := build(`{"guards": {"a": {"kind": "adaptive"}, "t": {"kind": "throttle"}}}`, pipeline.WithRegistry(r), pipeline.WithClock(clock.NewFake())); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range r.Snapshots() {
		got = append(got, string(s.Kind)+" "+s.Name)
	}
	if diff := cmp.Diff([]string{"adaptive a", "throttle t"}, got); diff != "" {
		t.Errorf("registered guards mismatch (-want +got):\n%s", diff)
	}
}
