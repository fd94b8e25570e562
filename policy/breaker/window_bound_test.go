package breaker

import "testing"

// A count window's positions stay bounded by the window also when many of
// them leave it at once (a run of successes after failures): the queue is
// compacted whenever most of it has left.
func TestPositionsStayBoundedAfterGaps(t *testing.T) {
	var p positions
	const size = 10
	// Failures at 1-10, 31-39 and from 100 on; the calls between are
	// successes, not kept.
	do(t, "the pushes and counts", func() { // bounded: a count that never drops spins
		for _, run := range [][2]uint64{{1, 10}, {31, 39}, {100, 1000}} {
			for i := run[0]; i <= run[1]; i++ {
				p.push(i)
				p.countAbove(i - min(i, size))
			}
		}
	})
	if n := p.countAbove(1000 - size); n != size {
		t.Fatalf("countAbove = %d, want %d", n, size)
	}
	if len(p.q) > 4*size {
		t.Fatalf("%d positions kept for a window of %d", len(p.q), size)
	}
}
