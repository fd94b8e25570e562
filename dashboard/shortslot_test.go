package dashboard

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Two snapshots in consecutive Interval slots, 0.2 s apart: the rates
// are over those 0.2 s, and the history gets one point.
func TestRatesOverLessThanAnInterval(t *testing.T) {
	d, f, _ := newFakeDashboard(t)
	p := Measure[int](d, "db")
	f.Advance(900 * time.Millisecond)
	snap(t, d, false)
	_, _ = p.Do(context.Background(), op(f, 0, nil))
	f.Advance(200 * time.Millisecond) // in the next slot
	g := snap(t, d, true).Guards[0]
	if diff := cmp.Diff(ptr(5), g.CallsPerSec); diff != "" {
		t.Errorf("calls/s mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]float64{0, 5}, g.History.Calls); diff != "" {
		t.Errorf("history of calls mismatch (-want +got):\n%s", diff)
	}
}
