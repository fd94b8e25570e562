package pipeline_test

import (
	"errors"
	"testing"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/pipeline"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

// A guard the registry refuses (its kind and name taken by a guard
// registered by someone else) does not stop a reload: it is listed in the
// Reload's Errors; Build, which cannot list it, fails.
func TestRegistryRefusalIsListed(t *testing.T) {
	r := telemetry.NewRegistry()
	if err := r.Register(breaker.New(breaker.WithName("b"))); err != nil {
		t.Fatal(err)
	}
	doc := []byte(`{"guards": {"b": {"kind": "breaker"}, "c": {"kind": "breaker"}}}`)
	s := pipeline.NewSet[int](pipeline.WithRegistry(r), pipeline.WithClock(clock.NewFake()))
	rl, err := s.ApplyJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	const want = `pipeline: telemetry: name already registered: breaker "b"`
	if len(rl.Errors) != 1 || rl.Errors[0].Error() != want || !errors.Is(rl.Errors[0], telemetry.ErrDuplicate) {
		t.Fatalf("Errors = %v, want [%s]", rl.Errors, want)
	}
	if got, wantS := rl.String(), "version 1\nadded guards.b\nadded guards.c\nerror: "+want; got != wantS {
		t.Errorf("Reload.String() = %q, want %q", got, wantS)
	}
	d, err := pipeline.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	// One refusal (b's) among the registrations: Build fails.
	r2 := telemetry.NewRegistry()
	if err := r2.Register(breaker.New(breaker.WithName("b"))); err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.Build[int](d, pipeline.WithRegistry(r2), pipeline.WithClock(clock.NewFake())); !errors.Is(err, telemetry.ErrDuplicate) {
		t.Errorf("Build = %v, want an error matching ErrDuplicate", err)
	}
}
