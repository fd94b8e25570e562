package dashboard

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Lists of several items (pipelines, a keyed guard's top keys) are JSON
// arrays of them all, in order.
func TestSnapshotListsSeveralPipelinesAndKeys(t *testing.T) {
	d, _, reg := newFakeDashboard(t)
	hosts := newFake("breaker", "hosts")
	hosts.set(func(s *telemetry.Snapshot) {
		s.State = telemetry.StateClosed
		s.Keys = &telemetry.KeySummary{Keys: 3, MaxKeys: 8192, Open: 1, Top: []telemetry.KeyStat{
			{Key: "a.example", State: telemetry.StateOpen, Refused: 9},
			{Key: "b.example", Refused: 2},
		}}
	})
	for _, err := range []error{
		reg.Register(hosts),
		reg.RegisterPipeline("checkout", retry.New[int](retry.WithName("pay"))),
		reg.RegisterPipeline("search", retry.New[int](retry.WithName("find"))),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	s := snap(t, d, false)
	wantPipes := []pipeJSON{{Name: "checkout", Chain: "retry(pay)"}, {Name: "search", Chain: "retry(find)"}}
	if diff := cmp.Diff(wantPipes, s.Pipelines); diff != "" {
		t.Errorf("pipelines mismatch (-want +got):\n%s", diff)
	}
	if len(s.Guards) != 1 || len(s.Guards[0].Guards) != 1 || s.Guards[0].Guards[0].Keys == nil {
		t.Fatalf("tiles %+v, want one with a keyed guard", s.Guards)
	}
	k := s.Guards[0].Guards[0].Keys
	got := []string{}
	for _, ks := range k.Top {
		got = append(got, ks.Key+" "+ks.State)
	}
	if diff := cmp.Diff([]string{"a.example open", "b.example "}, got); diff != "" || k.Keys != 3 || k.MaxKeys != 8192 || k.Open != 1 {
		t.Errorf("keys %d of %d, %d open; top mismatch (-want +got):\n%s", k.Keys, k.MaxKeys, k.Open, diff)
	}
}
