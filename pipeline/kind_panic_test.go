package pipeline_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/pipeline"
)

var errBadConfig = errors.New("mine: bad config")

// A WithKind build that panics is an error at the layer's config path, as
// an error it returns is: the panic's error, wrapped, or its value's text.
func TestWithKindBuildPanicIsAnError(t *testing.T) {
	kind := pipeline.WithKind("mine", func(config json.RawMessage) (resilience.Policy[int], error) {
		if string(config) == `"error"` {
			panic(errBadConfig)
		}
		panic("mine: cannot build " + string(config))
	})
	for _, tc := range []struct{ config, want string }{
		{`"error"`, "pipelines.p[0].config: mine: bad config"},
		{`"other"`, `pipelines.p[0].config: mine: cannot build "other"`},
	} {
		_, err := build(`{"pipelines": {"p": [{"kind": "mine", "config": `+tc.config+`}]}}`, kind)
		var pe *pipeline.Error
		if !errors.As(err, &pe) || err.Error() != tc.want {
			t.Errorf("config %s: error %v, want %q", tc.config, err, tc.want)
		}
	}
	_, err := build(`{"pipelines": {"p": [{"kind": "mine", "config": "error"}]}}`, kind)
	if !errors.Is(err, errBadConfig) {
		t.Errorf("error %v does not wrap the panic's error", err)
	}
}
