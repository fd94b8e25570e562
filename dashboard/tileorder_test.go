package dashboard

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Tiles stay in name order as names come, whatever the order they come
// in: a meter made after later names' tiles, a guard registered later.
func TestTilesStayInNameOrder(t *testing.T) {
	d, f, reg := newFakeDashboard(t)
	Measure[int](d, "zeta")
	snap(t, d, false)
	if err := reg.Register(newFake("mine", "mid")); err != nil {
		t.Fatal(err)
	}
	Measure[int](d, "alpha")
	f.Advance(Interval)
	var names []string
	for _, g := range snap(t, d, false).Guards {
		names = append(names, g.Name)
	}
	if diff := cmp.Diff([]string{"alpha", "mid", "zeta"}, names); diff != "" {
		t.Errorf("tiles mismatch (-want +got):\n%s", diff)
	}
}
