package breaker

// countWindow is a count-based window: the last size calls of the
// generation. Calls are numbered 1, 2, ... in the order they are counted
// (successes, counted without the lock, and failures); only the positions
// of failures and slow calls are kept, so successes never write here. The
// window at call count n holds positions n-size+1 .. n. Memory is O(size).
type countWindow struct {
	size       uint64 // 0: no count-based window
	fail, slow positions
}

func (w *countWindow) add(pos uint64, failed, slow bool) {
	if failed {
		w.fail.push(pos)
	}
	if slow {
		w.slow.push(pos)
	}
}

func (w *countWindow) reset() {
	w.fail.reset()
	w.slow.reset()
}

// countsLocked returns the successes, failures and slow calls in the
// window when n calls have been counted.
func (w *countWindow) countsLocked(n uint64) (successes, failures, slow uint64) {
	calls := min(n, w.size)
	failures = w.fail.countAbove(n - calls)
	slow = w.slow.countAbove(n - calls)
	return calls - failures, failures, slow
}

// positions is a queue of non-decreasing call positions.
type positions struct {
	q    []uint64
	head int
}

func (p *positions) push(pos uint64) { p.q = append(p.q, pos) }

func (p *positions) reset() { p.q, p.head = p.q[:0], 0 }

// countAbove drops the positions <= floor and returns how many are left.
func (p *positions) countAbove(floor uint64) uint64 {
	for p.head < len(p.q) && p.q[p.head] <= floor {
		p.head++
	}
	if p.head > len(p.q)/2 { // compact, keeping memory O(window)
		p.q = p.q[:copy(p.q, p.q[p.head:])]
		p.head = 0
	}
	return uint64(len(p.q) - p.head)
}

// timeWindow is the locked part of a time-based window: failures and slow
// calls per bucket. Successes are counted in the shards' successRings.
// Time is cut into buckets of width ns, bucket n covering [n·width,
// (n+1)·width) since the breaker was created; the window at time t holds
// the bucket of t and the buckets-1 before it.
type timeWindow struct {
	width, buckets int64 // buckets 0: no time-based window
	slots          []timeSlot
}

type timeSlot struct {
	num        int64
	fail, slow uint64
}

func newTimeWindow(width, buckets int64) timeWindow {
	return timeWindow{width: width, buckets: buckets, slots: make([]timeSlot, buckets)}
}

// bucket returns the number of the bucket that holds time t.
func (w *timeWindow) bucket(t int64) int64 {
	n := t / w.width
	if t < 0 && t%w.width != 0 {
		n-- // floor, for times before the breaker was created
	}
	return n
}

func (w *timeWindow) add(num int64, failed, slow bool) {
	s := &w.slots[mod(num, w.buckets)]
	if s.num != num {
		*s = timeSlot{num: num}
	}
	if failed {
		s.fail++
	}
	if slow {
		s.slow++
	}
}

func (w *timeWindow) reset() { clear(w.slots) }

// sum returns the failures and slow calls in the window ending with bucket cur.
func (w *timeWindow) sum(cur int64) (failures, slow uint64) {
	for _, s := range w.slots {
		if inWindow(s.num, cur, w.buckets) {
			failures += s.fail
			slow += s.slow
		}
	}
	return failures, slow
}

// inWindow reports whether bucket num is in the window of the given number
// of buckets that ends with bucket cur.
func inWindow(num, cur, buckets int64) bool { return num <= cur && num > cur-buckets }

// mod returns n modulo m in [0, m).
func mod(n, m int64) int64 {
	r := n % m
	if r < 0 {
		r += m
	}
	return r
}
