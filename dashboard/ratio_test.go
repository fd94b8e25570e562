package dashboard

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/telemetry"
)

// Without a Measure layer, a tile's error % is its guard's failure_ratio,
// when the guard reports one: unknown (null) while its window has no
// calls (window_calls 0), the ratio when it has some or does not say.
func TestErrorPctFromAGuardsFailureRatio(t *testing.T) {
	d, _, reg := newFakeDashboard(t)
	for _, g := range []struct {
		name   string
		values []telemetry.Value
	}{
		{"empty-window", values("failure_ratio", 0.25, "window_calls", 0)},
		{"no-ratio", values("window_calls", 8)},
		{"unsaid-window", values("failure_ratio", 0.25)},
		{"window", values("failure_ratio", 0.25, "window_calls", 4)},
	} {
		f := newFake("mine", g.name)
		f.set(func(s *telemetry.Snapshot) { s.Values = g.values })
		if err := reg.Register(f); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]*float64{}
	for _, tile := range snap(t, d, false).Guards {
		got[tile.Name] = tile.ErrorPct
	}
	want := map[string]*float64{"empty-window": nil, "no-ratio": nil, "unsaid-window": ptr(25), "window": ptr(25)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error %% by tile mismatch (-want +got):\n%s", diff)
	}
}
