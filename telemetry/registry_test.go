package telemetry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/telemetry"
)

// guard is a Guard with a fixed snapshot.
type guard struct{ s telemetry.Snapshot }

func (g guard) Name() string                 { return g.s.Name }
func (g guard) Snapshot() telemetry.Snapshot { return g.s }

func newBreaker(name string) *breaker.Breaker {
	return breaker.New(breaker.WithName(name), breaker.WithClock(clock.NewFake()))
}

func TestRegistryDuplicate(t *testing.T) {
	r := telemetry.NewRegistry()
	first := newBreaker("db")
	if err := r.Register(first); err != nil {
		t.Fatal(err)
	}
	second := newBreaker("db")
	second.ForceOpen()
	err := r.Register(second)
	if !errors.Is(err, telemetry.ErrDuplicate) {
		t.Fatalf("Register of a taken name = %v, want ErrDuplicate", err)
	}
	if want := `telemetry: name already registered: breaker "db"`; err.Error() != want {
		t.Fatalf("error = %q, want %q", err, want)
	}
	// The first stays.
	if got := r.Snapshots(); len(got) != 1 || got[0].State != telemetry.StateClosed {
		t.Fatalf("Snapshots() = %+v, want the first breaker only (closed)", got)
	}
	// Another kind may take the name.
	if err := r.Register(guard{telemetry.Snapshot{Kind: bulkhead.Kind, Name: "db"}}); err != nil {
		t.Fatalf("Register of a bulkhead named like a breaker = %v, want nil", err)
	}
	if err := r.Register(guard{telemetry.Snapshot{Kind: bulkhead.Kind, Name: "db"}}); !errors.Is(err, telemetry.ErrDuplicate) {
		t.Fatalf("Register of a second bulkhead db = %v, want ErrDuplicate", err)
	}

	p := resilience.Then(breaker.Policy[int](first))
	if err := r.RegisterPipeline("prices", p); err != nil {
		t.Fatal(err)
	}
	err = r.RegisterPipeline("prices", p)
	if !errors.Is(err, telemetry.ErrDuplicate) || err.Error() != `telemetry: name already registered: pipeline "prices"` {
		t.Fatalf("RegisterPipeline of a taken name = %v, want ErrDuplicate naming the pipeline", err)
	}
}

func TestRegistryNoName(t *testing.T) {
	var r telemetry.Registry // the zero Registry is ready
	if err := r.Register(newBreaker("")); !errors.Is(err, telemetry.ErrNoName) {
		t.Fatalf("Register of an unnamed breaker = %v, want ErrNoName", err)
	}
	if err := r.RegisterPipeline("", resilience.Policy[int]{}); !errors.Is(err, telemetry.ErrNoName) {
		t.Fatalf("RegisterPipeline(\"\") = %v, want ErrNoName", err)
	}
	if got := r.Snapshots(); len(got) != 0 {
		t.Fatalf("Snapshots() = %v, want none", got)
	}
}

func TestRegistryEnumeration(t *testing.T) {
	r := telemetry.NewRegistry()
	for _, g := range []telemetry.Guard{
		newBreaker("search"),
		guard{telemetry.Snapshot{Kind: ratelimit.Kind, Name: "api", Values: []telemetry.Value{{Name: "rate", Value: 10}}}},
		newBreaker("api"),
		guard{telemetry.Snapshot{Kind: bulkhead.Kind, Name: "billing", Refused: 2}},
	} {
		if err := r.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	want := []telemetry.Snapshot{
		{Kind: breaker.Kind, Name: "api", State: telemetry.StateClosed},
		{Kind: ratelimit.Kind, Name: "api", Values: []telemetry.Value{{Name: "rate", Value: 10}}},
		{Kind: bulkhead.Kind, Name: "billing", Refused: 2},
		{Kind: breaker.Kind, Name: "search", State: telemetry.StateClosed},
	}
	got := r.Snapshots()
	for i := range got { // the breakers' Values are the breaker package's to test
		if got[i].Kind == breaker.Kind {
			got[i].Values = nil
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Snapshots() mismatch (-want +got):\n%s", diff)
	}

	for name, p := range map[string]resilience.Policy[int]{
		"b": resilience.Then(resilience.Fallback(func(context.Context, error) (int, error) { return 0, nil }), breaker.Policy[int](newBreaker("x"))),
		"a": {},
	} {
		if err := r.RegisterPipeline(name, p); err != nil {
			t.Fatal(err)
		}
	}
	wantP := []telemetry.Pipeline{{Name: "a", Chain: "identity"}, {Name: "b", Chain: "fallback > breaker(x)"}}
	if diff := cmp.Diff(wantP, r.Pipelines()); diff != "" {
		t.Fatalf("Pipelines() mismatch (-want +got):\n%s", diff)
	}
}

func TestRegistryOpenBreakers(t *testing.T) {
	r := telemetry.NewRegistry()
	f := clock.NewFake()
	a := breaker.New(breaker.WithName("a"), breaker.WithClock(f), breaker.WithThreshold(1), breaker.WithCooldown(10))
	b := breaker.New(breaker.WithName("b"), breaker.WithClock(f))
	c := breaker.New(breaker.WithName("c"), breaker.WithClock(f))
	for _, g := range []telemetry.Guard{c, b, a, guard{telemetry.Snapshot{Kind: bulkhead.Kind, Name: "a"}}} {
		if err := r.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	names := func() []string {
		var out []string
		for _, s := range r.OpenBreakers() {
			out = append(out, s.Name+" "+s.State)
		}
		return out
	}
	if got := names(); got != nil {
		t.Fatalf("OpenBreakers() with all closed = %v, want nil", got)
	}
	a.Record(true)
	c.ForceOpen()
	if diff := cmp.Diff([]string{"a open", "c open"}, names()); diff != "" {
		t.Fatalf("OpenBreakers() mismatch (-want +got):\n%s", diff)
	}
	f.Advance(10) // a's cooldown ends: half-open still counts
	if diff := cmp.Diff([]string{"a half-open", "c open"}, names()); diff != "" {
		t.Fatalf("OpenBreakers() mismatch (-want +got):\n%s", diff)
	}
	c.Reset()
	if diff := cmp.Diff([]string{"a half-open"}, names()); diff != "" {
		t.Fatalf("OpenBreakers() mismatch (-want +got):\n%s", diff)
	}
}

func TestRegistryGuardMayUseTheRegistry(t *testing.T) {
	// Snapshots are taken outside the registry's lock: a breaker whose
	// due transition runs a callback that reads the registry does not
	// deadlock it.
	r := telemetry.NewRegistry()
	f := clock.NewFake()
	var seen []telemetry.Pipeline
	b := breaker.New(breaker.WithName("db"), breaker.WithClock(f), breaker.WithThreshold(1), breaker.WithCooldown(10),
		breaker.WithOnStateChange(func(tr breaker.Transition) {
			if tr.To == breaker.HalfOpen {
				seen = r.Pipelines()
			}
		}))
	if err := r.Register(b); err != nil {
		t.Fatal(err)
	}
	if err := r.RegisterPipeline("p", breaker.Policy[int](b)); err != nil {
		t.Fatal(err)
	}
	b.Record(true)
	f.Advance(10)
	done := make(chan []telemetry.Snapshot)
	go func() { done <- r.Snapshots() }() // makes the half-open transition happen
	select {
	case got := <-done:
		if len(got) != 1 || got[0].State != telemetry.StateHalfOpen {
			t.Fatalf("Snapshots() = %+v, want db half-open", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Snapshots() whose guard's callback reads the registry did not return within 10s")
	}
	if diff := cmp.Diff([]telemetry.Pipeline{{Name: "p", Chain: "breaker(db)"}}, seen); diff != "" {
		t.Fatalf("the callback's Pipelines() mismatch (-want +got):\n%s", diff)
	}
}
