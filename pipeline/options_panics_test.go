package pipeline_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/pipeline"
)

// Invalid options panic naming what is wrong.
func TestOptionPanicsSayWhat(t *testing.T) {
	nop := func(json.RawMessage) (resilience.Policy[int], error) { return resilience.Policy[int]{}, nil }
	for want, f := range map[string]func(){
		`pipeline: WithKind("x"): build must not be nil`:                  func() { pipeline.WithKind[int]("x", nil) },
		`pipeline: WithKind("retry"): "retry" is a built-in kind`:         func() { pipeline.WithKind("retry", nop) },
		`pipeline: WithKind("ratelimit"): "ratelimit" is a built-in kind`: func() { pipeline.WithKind("ratelimit", nop) },
		"pipeline: WithKind kind must not be empty":                       func() { pipeline.WithKind("", nop) },
		"pipeline: option must not be nil":                                func() { pipeline.NewSet[int](nil) },
	} {
		got := func() (msg string) {
			defer func() { msg = fmt.Sprint(recover()) }()
			f()
			return ""
		}()
		if got != want {
			t.Errorf("panic = %q, want %q", got, want)
		}
	}
}
