package dashboard

import (
	"testing"
	"time"
)

// The Interval slots are whole multiples of Interval on the dashboard's
// clock before the Unix epoch too (a clock set so, a test's): a new
// snapshot at the start of each second, and the stream's timer set to
// the next one.
func TestOneSnapshotPerSlotBeforeTheEpoch(t *testing.T) {
	d, f, _ := newFakeDashboard(t)
	f.Set(time.Unix(-2, 0).Add(500 * time.Millisecond)) // 1969-12-31T23:59:58.5Z
	if got := untilNext(f.Now()); got != 500*time.Millisecond {
		t.Errorf("untilNext at -1.5s = %v, want 500ms", got)
	}
	_, a := d.current(f.Now(), false)
	f.Advance(400 * time.Millisecond) // -1.1s: the same slot
	_, b := d.current(f.Now(), false)
	f.Advance(100 * time.Millisecond) // -1s: the next one
	_, c := d.current(f.Now(), false)
	if a != 1 || b != 1 || c != 2 {
		t.Fatalf("seqs %d %d %d, want 1 1 2 (a new snapshot at the start of each second only)", a, b, c)
	}
	if got := untilNext(f.Now()); got != time.Second {
		t.Errorf("untilNext at -1s = %v, want 1s", got)
	}
}
