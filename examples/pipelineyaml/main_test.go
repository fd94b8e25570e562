package main

import (
	"errors"
	"testing"

	"github.com/f0b5b96b/resilience/pipeline"
)

func TestLoad(t *testing.T) {
	doc, err := load([]byte(document))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := pipeline.Build[string](doc)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ps.Policies["pricing"].String(), "retry > breaker(pricing-breaker) > timeout(200ms)"; got != want {
		t.Errorf("pricing = %q, want %q", got, want)
	}
}

func TestLoadRejectsUnknownKeys(t *testing.T) {
	_, err := load([]byte("pipelines:\n  p:\n    - kind: retry\n      confg: {}\n"))
	var pe *pipeline.Error
	if !errors.As(err, &pe) || pe.Path != "pipelines.p[0].confg" {
		t.Errorf("load = %v, want an error at pipelines.p[0].confg", err)
	}
}
