package adaptive_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/adaptive"
	"github.com/f0b5b96b/resilience/telemetry"
)

func TestSnapshot(t *testing.T) {
	lim := adaptive.New(adaptive.WithInitial(2), adaptive.WithName("db"))
	hold(t, lim, 2)
	for range 3 {
		if _, err := lim.Acquire(context.Background()); err == nil {
			t.Fatal("a call over the limit was admitted")
		}
	}
	if lim.Name() != "db" {
		t.Errorf("Name() = %q, want db", lim.Name())
	}
	s := lim.Snapshot()
	got := map[string]float64{}
	for _, v := range s.Values {
		if v.Unit == "" || v.Help == "" {
			t.Errorf("value %s does not describe itself: %+v", v.Name, v)
		}
		got[v.Name] = v.Value
	}
	if s.Kind != adaptive.Kind || s.Name != "db" || s.Refused != 3 || s.State != "" || s.Keys != nil {
		t.Errorf("Snapshot = %+v, want kind adaptive, name db, 3 refused", s)
	}
	want := map[string]float64{"limit": 2, "in_flight": 2, "queued": 0, "latency": 0, "baseline": 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Values mismatch (-want +got):\n%s", diff)
	}
	if err := telemetry.NewRegistry().Register(lim); err != nil {
		t.Fatalf("Register = %v", err)
	}
}

// Each refusal is reported once, as adaptive.refused with its error and
// the limiter's name, without allocating; the events agree with Stats.
func TestEventRefused(t *testing.T) {
	var events telemetry.Counter
	var last telemetry.Event
	obs := telemetry.Multi(&events, telemetry.ObserverFunc(func(e telemetry.Event) { last = e }))
	lim := adaptive.New(adaptive.WithInitial(1), adaptive.WithMinLimit(1), adaptive.WithMaxLimit(1), adaptive.WithName("db"), adaptive.WithObserver(obs))
	hold(t, lim, 1)
	for range 3 {
		if _, err := lim.Acquire(context.Background()); !errors.Is(err, adaptive.ErrFull) {
			t.Fatalf("Acquire over the limit = %v, want ErrFull", err)
		}
	}
	if n := events.Count("db", adaptive.EventRefused); n != 3 || n != lim.Stats().Refused {
		t.Errorf("%d adaptive.refused events, Stats().Refused %d; want 3 of each", n, lim.Stats().Refused)
	}
	if last.Type != adaptive.EventRefused || last.Name != "db" || !errors.Is(last.Err, adaptive.ErrFull) || last.Kind() != adaptive.Kind {
		t.Errorf("event %+v, want adaptive.refused of db with ErrFull", last)
	}
	quiet := adaptive.New(adaptive.WithInitial(1), adaptive.WithMinLimit(1), adaptive.WithMaxLimit(1), adaptive.WithObserver(&events))
	hold(t, quiet, 1)
	_, _ = quiet.Acquire(context.Background()) // the counter's first event of this name copies its map
	if n := testing.AllocsPerRun(100, func() { _, _ = quiet.Acquire(context.Background()) }); n != 0 {
		t.Errorf("a refusal with an observer: %v allocs, want 0", n)
	}
}
