package rapidgen

import (
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestCheckInBubbleSkips checks that a run rapid rejects (t.Skip, a draw
// its filter refuses), which ends the run with a panic inside the bubble,
// is not a failure: rapid draws other runs, and the check passes.
func TestCheckInBubbleSkips(t *testing.T) {
	var valid, skipped atomic.Int64
	CheckInBubble(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 9).Draw(t, "n")
		time.Sleep(time.Duration(n) * time.Hour)
		if n%3 == 0 {
			skipped.Add(1)
			t.Skip("a multiple of 3")
		}
		_ = rapid.IntRange(0, 9).Filter(func(m int) bool { return m != 4 }).Draw(t, "m")
		valid.Add(1)
	})
	if valid.Load() == 0 || skipped.Load() == 0 {
		t.Errorf("%d valid runs, %d skipped; want both", valid.Load(), skipped.Load())
	}
}
