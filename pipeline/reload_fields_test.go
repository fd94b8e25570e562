package pipeline_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/pipeline"
)

// A retuned guard's change names the live settings that changed, sorted;
// a replaced guard's, every setting of either kind that differs.
func TestRetunedChangeNamesItsFields(t *testing.T) {
	s := pipeline.NewSet[int](pipeline.WithClock(clock.NewFake()))
	mustApply(t, s, []byte(`{"guards": {
		"b": {"kind": "breaker", "config": {"Threshold": 3}},
		"l": {"kind": "ratelimit", "config": {"Rate": 1, "Burst": 1}},
		"r": {"kind": "bulkhead", "config": {"MaxConcurrent": 2}}}}`))
	r := mustApply(t, s, []byte(`{"guards": {
		"b": {"kind": "breaker", "config": {"Threshold": 4}},
		"l": {"kind": "ratelimit", "config": {"Rate": 2, "Burst": 3}},
		"r": {"kind": "ratelimit", "config": {"Rate": 2, "Burst": 3}}}}`))
	want := []pipeline.Change{
		{Path: "guards.b", Action: pipeline.Retuned, Fields: []string{"Threshold"}},
		{Path: "guards.l", Action: pipeline.Retuned, Fields: []string{"Burst", "Rate"}},
		{Path: "guards.r", Action: pipeline.Replaced, Fields: []string{"Burst", "MaxConcurrent", "Rate"}},
	}
	if diff := cmp.Diff(want, r.Changes); diff != "" {
		t.Errorf("changes mismatch (-want +got):\n%s", diff)
	}
	if got, want := r.String(), "version 2\nretuned guards.b (Threshold)\nretuned guards.l (Burst, Rate)\nreplaced guards.r (Burst, MaxConcurrent, Rate)"; got != want {
		t.Errorf("Reload.String() = %q, want %q", got, want)
	}
}

// Each Action reads as its word; a value that is none of them, as
// Action(n).
func TestActionString(t *testing.T) {
	want := map[pipeline.Action]string{
		0: "Action(0)", pipeline.Added: "added", pipeline.Removed: "removed", pipeline.Retuned: "retuned",
		pipeline.Replaced: "replaced", pipeline.Changed: "changed", 6: "Action(6)",
	}
	for a, w := range want {
		if got := a.String(); got != w {
			t.Errorf("Action(%d).String() = %q, want %q", uint8(a), got, w)
		}
	}
	if got := (pipeline.Change{Path: "pipelines.p", Action: pipeline.Added}).String(); got != "added pipelines.p" {
		t.Errorf("Change.String() without fields = %q, want %q", got, "added pipelines.p")
	}
}
