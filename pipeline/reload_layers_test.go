package pipeline_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/pipeline"
)

// A pipeline whose layers' settings change is Changed; one whose document
// only changes its spacing, for a built-in kind or a kind of one's own, is
// not.
func TestReloadComparesLayerSettings(t *testing.T) {
	s := pipeline.NewSet[int](pipeline.WithClock(clock.NewFake()), pipeline.WithKind("any", func(json.RawMessage) (resilience.Policy[int], error) {
		return resilience.Policy[int]{}, nil
	}))
	for _, tc := range []struct {
		doc  string
		want []pipeline.Change
	}{
		{`{"pipelines": {"p": [{"kind": "timeout", "config": {"Duration": "1s"}}, {"kind": "any", "config": {"n": 1}}]}}`,
			[]pipeline.Change{{Path: "pipelines.p", Action: pipeline.Added}}},
		{`{"pipelines": {"p": [{"kind": "timeout", "config": {"Duration":"1s"}}, {"kind": "any", "config": { "n" : 1 }}]}}`, nil},
		{`{"pipelines": {"p": [{"kind": "timeout", "config": {"Duration": "2s"}}, {"kind": "any", "config": {"n": 1}}]}}`,
			[]pipeline.Change{{Path: "pipelines.p", Action: pipeline.Changed}}},
		{`{"pipelines": {"p": [{"kind": "timeout", "config": {"Duration": "2s"}}, {"kind": "any", "config": {"n": 2}}]}}`,
			[]pipeline.Change{{Path: "pipelines.p", Action: pipeline.Changed}}},
	} {
		r := mustApply(t, s, []byte(tc.doc))
		if diff := cmp.Diff(tc.want, r.Changes); diff != "" {
			t.Errorf("%s: changes mismatch (-want +got):\n%s", tc.doc, diff)
		}
	}
	// A Document made in Go may hold a config that is not JSON, for a
	// kind that reads its own format: configs that differ still differ.
	for i, raw := range []string{"a=1", "a=2"} {
		r, err := s.Apply(pipeline.Document{Pipelines: map[string][]pipeline.Layer{"p": {{Kind: "any", Config: json.RawMessage(raw)}}}})
		if err != nil {
			t.Fatal(err)
		}
		if want := []pipeline.Change{{Path: "pipelines.p", Action: pipeline.Changed}}; !cmp.Equal(want, r.Changes) {
			t.Errorf("config %d, %q: changes = %v, want %v", i, raw, r.Changes, want)
		}
	}
}
