package pipeline_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/f0b5b96b/resilience/pipeline"
)

// A Document made in Go, not by Parse: a null config (spaces around it or
// not) is an absent one, and a config that is not JSON is an error at its
// path that starts with the kind's package, as every error does.
func TestGoDocumentConfigs(t *testing.T) {
	doc := func(raw string) pipeline.Document {
		return pipeline.Document{
			Guards:    map[string]pipeline.GuardSpec{"b": {Kind: "breaker", Config: json.RawMessage(raw)}},
			Pipelines: map[string][]pipeline.Layer{"p": {{Kind: "retry", Config: json.RawMessage(raw)}, {Guard: "b"}}},
		}
	}
	for _, raw := range []string{"null", " null\n"} {
		ps, err := pipeline.Build[int](doc(raw))
		if err != nil {
			t.Fatalf("config %q: %v", raw, err)
		}
		if got, want := ps.Policies["p"].String(), "retry > breaker(b)"; got != want {
			t.Errorf("config %q: pipeline = %q, want %q", raw, got, want)
		}
	}
	_, err := pipeline.Build[int](doc("{bad"))
	var pe *pipeline.Error
	if !errors.As(err, &pe) || pe.Path != "guards.b.config" || !strings.HasPrefix(pe.Err.Error(), "breaker: ") {
		t.Errorf("config {bad: error %v, want one at guards.b.config starting with %q", err, "breaker: ")
	}
}
