package pipeline_test

import (
	"errors"
	"testing"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/pipeline"
)

// FuzzParseBuild: any input either parses and builds, or fails with an
// *Error naming a path; nothing panics.
func FuzzParseBuild(f *testing.F) {
	for _, seed := range []string{
		string(loadDoc(3, 2, 1, 10, 4)),
		`{"pipelines": {"p": [{"kind": "timeout", "config": {"Duration": "1s"}}, {"kind": "hedge", "config": {"Delay": "5ms"}}]}}`,
		`{"guards": {"a": {"kind": "adaptive"}, "t": {"kind": "throttle"}}, "pipelines": {"p": [{"guard": "a"}, {"guard": "t"}]}}`,
		`{"guards": {"b": {"kind": "breaker", "config": {"Threshold": -1, "FailureRatio": 0.5}}}}`,
		`{"pipelines": {"p": [{"guard": "b", "config": null}]}}`,
		`null`, `{}`, `{"guards": []}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := pipeline.Parse(data)
		var pe *pipeline.Error
		if err != nil {
			if !errors.As(err, &pe) || pe.Path == "" {
				t.Fatalf("Parse error %v is not an *Error with a path", err)
			}
			return
		}
		if _, err := pipeline.Build[int](d, pipeline.WithClock(clock.NewFake())); err != nil && (!errors.As(err, &pe) || pe.Path == "") {
			t.Fatalf("Build error %v is not an *Error with a path", err)
		}
	})
}
