package pipeline_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/pipeline"
	"github.com/f0b5b96b/resilience/policy/adaptive"
	"github.com/f0b5b96b/resilience/policy/throttle"
)

// A guard whose kind changes is replaced, even when its settings read the
// same in both kinds (an adaptive limiter and a throttler, both with
// their defaults).
func TestReloadReplacesAGuardOfAnotherKindWithTheSameSettings(t *testing.T) {
	s := pipeline.NewSet[int](pipeline.WithClock(clock.NewFake()))
	mustApply(t, s, []byte(`{"guards": {"g": {"kind": "adaptive"}}}`))
	if a, ok := s.Guard("g").(*adaptive.Limiter); !ok || a.Name() != "g" {
		t.Fatalf("guard g = %#v, want an *adaptive.Limiter named g", s.Guard("g"))
	}
	r := mustApply(t, s, []byte(`{"guards": {"g": {"kind": "throttle"}}}`))
	if diff := cmp.Diff([]pipeline.Change{{Path: "guards.g", Action: pipeline.Replaced}}, r.Changes); diff != "" {
		t.Errorf("changes mismatch (-want +got):\n%s", diff)
	}
	th, ok := s.Guard("g").(*throttle.Throttler)
	if !ok {
		t.Fatalf("guard g = %T, want *throttle.Throttler", s.Guard("g"))
	}
	if th.Name() != "g" {
		t.Errorf("throttler's Name() = %q, want the document's name g", th.Name())
	}
}
