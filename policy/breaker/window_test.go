package breaker

import "testing"

func TestBucketFloorsNegativeTimes(t *testing.T) {
	w := newTimeWindow(10, 3)
	for _, c := range []struct{ t, want int64 }{{0, 0}, {9, 0}, {10, 1}, {-1, -1}, {-10, -1}, {-11, -2}} {
		if got := w.bucket(c.t); got != c.want {
			t.Errorf("bucket(%d) = %d, want %d", c.t, got, c.want)
		}
	}
	for _, c := range []struct{ n, m, want int64 }{{5, 3, 2}, {-1, 3, 2}, {-3, 3, 0}} {
		if got := mod(c.n, c.m); got != c.want {
			t.Errorf("mod(%d, %d) = %d, want %d", c.n, c.m, got, c.want)
		}
	}
}

func TestTimeWindowSum(t *testing.T) {
	w := newTimeWindow(10, 3)
	w.add(-1, true, true) // slot 2, until bucket 2 replaces it
	w.add(0, true, false)
	w.add(1, true, true)
	w.add(2, false, true)
	for _, c := range []struct {
		cur        int64
		fail, slow uint64
	}{{2, 2, 2}, {3, 1, 2}, {4, 0, 1}, {5, 0, 0}, {1, 2, 1}} {
		f, s := w.sum(c.cur)
		if f != c.fail || s != c.slow {
			t.Errorf("sum(%d) = %d, %d; want %d, %d", c.cur, f, s, c.fail, c.slow)
		}
	}
}

func TestPositionsStayBounded(t *testing.T) {
	var p positions
	for i := uint64(1); i <= 1000; i++ {
		p.push(i)
		if n := p.countAbove(i - min(i, 10)); n != min(i, 10) {
			t.Fatalf("after %d: countAbove = %d", i, n)
		}
	}
	if cap(p.q) > 64 {
		t.Fatalf("cap = %d: positions are not compacted", cap(p.q))
	}
}
