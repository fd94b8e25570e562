package ratelimit

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
)

// Allow reads the real clock's nanoseconds as units, without the multiply,
// only where a unit is exactly one nanosecond: there unitsRange is the
// identity. A rate whose interval is not a whole number of nanoseconds, a
// burst that lowers inc, or no refill must keep the multiply, or Allow
// would count time faster than the bucket refills (over-admit) or refill a
// bucket that must not.
func TestNanosecondUnits(t *testing.T) {
	cases := []struct {
		name  string
		rate  float64
		burst int
		want  bool
	}{
		{"1e9 per second", 1e9, 1, true},
		{"Every(1ms)", Every(time.Millisecond), 5, true},
		{"100 per second", 100, 1, true},
		{"Every(3s)", Every(3 * time.Second), 1, true},
		{"3 per second", 3, 1, false},               // T = 333333333.3ns
		{"7e8 per second", 7e8, 1, false},           // T = 1.43ns
		{"huge burst lowers inc", 1e-6, 1e6, false}, // inc = 2^61/burst < T: a unit is > 1ns
		{"no refill", 0, 3, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rate := c.rate
			if rate == 0 {
				rate = resilience.Off
			}
			l := New(rate, c.burst)
			p := l.cur.Load().p
			if p.ns != c.want {
				t.Fatalf("ns = %v, want %v (inc %d, k %#x, kUp %d)", p.ns, c.want, p.inc, p.k, p.kUp)
			}
			if !p.ns {
				return
			}
			var got, want [][2]int64
			for _, ns := range []int64{0, 1, 999, 1e9 + 7, 1 << 40, maxElapsed - 1, maxElapsed} {
				lo, hi := p.unitsRange(ns)
				got = append(got, [2]int64{lo, hi})
				want = append(want, [2]int64{ns, ns})
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("unitsRange with ns set mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
