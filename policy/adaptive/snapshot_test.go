package adaptive_test

import (
	"context"
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
