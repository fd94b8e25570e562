package pipeline_test

import (
	"context"
	"testing"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/pipeline"
)

// The set's layer costs one allocation per call (the rest of the chain,
// handed to the current version's pipeline as an op); the pipeline of
// Current costs none of its own.
func TestSetLayerAllocations(t *testing.T) {
	s := pipeline.NewSet[int](pipeline.WithClock(clock.NewFake()))
	mustApply(t, s, loadDoc(5, 5, 1e9, 1<<40, 100))
	ctx := context.Background()
	op := func(context.Context) (int, error) { return 1, nil }
	layer, err := s.Policy("work")
	if err != nil {
		t.Fatal(err)
	}
	cur, _ := s.Current("work")
	for _, tc := range []struct {
		name string
		do   func()
		want float64
	}{
		{"Policy", func() { layer.Do(ctx, op) }, 1},
		{"Current", func() { cur.Do(ctx, op) }, 0},
	} {
		if got := testing.AllocsPerRun(100, tc.do); got != tc.want {
			t.Errorf("%s: %v allocations per call, want %v", tc.name, got, tc.want)
		}
	}
}
