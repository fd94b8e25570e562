package ratelimit

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/telemetry"
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

// Allow's shortest path (the real clock, nanosecond units) makes the same
// step as the general one: it admits the burst, refuses once it is spent
// (counting and reporting the refusal), and after SetRate steps on the new
// bucket. One event an hour: no token comes back within the test.
func TestAllowRealClockNanosecondUnits(t *testing.T) {
	var refused []telemetry.Event
	l := New(Every(time.Hour), 3, WithObserver(telemetry.ObserverFunc(func(e telemetry.Event) {
		refused = append(refused, e)
	})))
	if b := l.cur.Load(); !b.fastNS || !b.p.fastNS {
		t.Fatalf("fastNS = %v (params %v) for the real clock and Every(1h) (ns %v, fast %v)", b.fastNS, b.p.fastNS, b.p.ns, b.p.fast)
	}
	var got []bool
	for range 4 {
		got = append(got, l.Allow())
	}
	if diff := cmp.Diff([]bool{true, true, true, false}, got); diff != "" {
		t.Fatalf("Allow mismatch (-want +got):\n%s", diff)
	}
	if s := l.Stats(); s.Refused != 1 || len(refused) != 1 || refused[0].Type != EventRefused {
		t.Fatalf("Refused = %d, events %v; want the one refusal counted and reported", s.Refused, refused)
	}
	old := l.cur.Load()
	l.SetBurst(5) // the bucket is replaced; its 0 tokens carry over, 2 more room
	if l.cur.Load() == old || old.tat.Load() != sealed {
		t.Fatal("SetBurst did not replace the bucket")
	}
	if l.Allow() {
		t.Fatal("Allow admitted on an empty bucket after SetBurst")
	}
	// The new bucket steps with the new rate's inc and tau: at 1e9 per
	// second with a burst of 1000, three calls pass (under the old ones, an
	// hour each, the second would not).
	l.SetRate(1e9)
	l.SetBurst(1000)
	got = got[:0]
	for range 3 {
		got = append(got, l.Allow())
	}
	if diff := cmp.Diff([]bool{true, true, true}, got); diff != "" {
		t.Fatalf("Allow after SetRate(1e9) mismatch (-want +got):\n%s", diff)
	}
	if b := l.cur.Load(); b.inc != b.p.inc || b.tau != b.p.tau || b.fastNS != b.p.fastNS {
		t.Fatalf("bucket's inc %d, tau %d, fastNS %v; its params' %d, %d, %v", b.inc, b.tau, b.fastNS, b.p.inc, b.p.tau, b.p.fastNS)
	}
	// A full bucket of one: the token taken leaves the deficit exactly at
	// the capacity, which passes.
	if one := New(Every(time.Hour), 1); !one.Allow() || one.Allow() {
		t.Fatal("Burst 1: want the one token, then none")
	}
}

// admitAt's compare-and-swap must land only on the TAT it was given, and
// never on a sealed bucket (which would take tokens the new bucket never
// counts, and unseal the old one).
func TestAdmitAtOnAStaleTAT(t *testing.T) {
	l := New(Every(time.Hour), 2)
	b := l.cur.Load()
	inc, tau := b.p.inc, b.p.tau
	if r := b.admitAt(5, 10, inc, tau); r != lost { // the TAT is 0, not 5
		t.Fatalf("admitAt on a TAT that changed: outcome %d, want lost", r)
	}
	if got := b.tat.Load(); got != 0 {
		t.Fatalf("TAT = %d after a lost step, want 0", got)
	}
	l.SetRate(Every(time.Minute)) // seals b
	if r := b.admitAt(sealed, 10, inc, tau); r != replaced {
		t.Fatalf("admitAt on a sealed bucket: outcome %d, want replaced", r)
	}
	if b.tat.Load() != sealed {
		t.Fatal("admitAt unsealed a replaced bucket")
	}
}
