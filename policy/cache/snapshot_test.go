package cache_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/cache"
	"github.com/f0b5b96b/resilience/telemetry"
)

// A cache is a telemetry.Guard: registered under its name and kind, its
// snapshot's values are its Stats.
func TestSnapshot(t *testing.T) {
	c := cache.New[int](time.Hour, cache.WithName("prices"))
	var _ telemetry.Guard = c
	reg := telemetry.NewRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	p := c.Policy()
	ctx := cache.Key(context.Background(), "k")
	for range 3 {
		if _, err := p.Do(ctx, func(context.Context) (int, error) { return 1, nil }); err != nil {
			t.Fatal(err)
		}
	}
	snaps := reg.Snapshots()
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots, want 1", len(snaps))
	}
	s := snaps[0]
	got := map[string]float64{}
	for _, v := range s.Values {
		got[v.Name] = v.Value
	}
	st := c.Stats()
	want := map[string]float64{
		"hits": 2, "misses": 1, "coalesced": 0, "stale": 0, "evictions": 0, "refreshes": 0, "refresh_failures": 0,
		"entries": float64(st.Entries), "size": float64(st.Bytes),
	}
	if s.Kind != cache.Kind || s.Name != "prices" || s.Refused != 0 {
		t.Errorf("snapshot %s %q refused %d, want cache \"prices\" refused 0", s.Kind, s.Name, s.Refused)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("values mismatch (-want +got):\n%s", diff)
	}
	if st.Entries != 1 {
		t.Errorf("Stats().Entries = %d, want 1", st.Entries)
	}
}
