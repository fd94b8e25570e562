package ratelimit_test

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

// ReserveN(0) takes nothing: on a full bucket, at an instant that is not a
// whole number of units (Rate 3: a unit is a little under 1ns), the whole
// burst is still there after it.
func TestReserveZeroTakesNothing(t *testing.T) {
	clk := clock.NewFake()
	l := ratelimit.New(3, 2, ratelimit.WithClock(clk))
	clk.Advance(time.Nanosecond)
	r := l.ReserveN(0)
	if !r.OK() || r.Delay() != 0 {
		t.Fatalf("ReserveN(0): OK %v, Delay %v; want OK with no delay", r.OK(), r.Delay())
	}
	if !l.AllowN(2) {
		t.Error("AllowN(Burst) refused after ReserveN(0) on a full bucket")
	}
}

// A reservation whose tokens would be there only after the limiter's
// clock stops (2^61ns, 73 years, after New) is not OK; one whose tokens
// are there at that last instant is.
func TestReserveAtTheEndOfTheClock(t *testing.T) {
	const interval = time.Duration(1 << 60) // Burst 2: the bucket is 2^61ns deep
	for _, tc := range []struct {
		name   string
		takeAt time.Duration // when AllowN(2) empties the bucket
		ok     bool
		delay  time.Duration
	}{
		{"tokens back at the last instant", 0, true, 1<<61 - 1},
		{"tokens back after it", time.Nanosecond, false, resilience.Never},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake()
			l := ratelimit.New(ratelimit.Every(interval), 2, ratelimit.WithClock(clk))
			clk.Advance(tc.takeAt)
			if !l.AllowN(2) {
				t.Fatal("AllowN(Burst) refused on a full bucket")
			}
			clk.Advance(time.Nanosecond - tc.takeAt)
			r := l.ReserveN(2)
			if r.OK() != tc.ok || r.Delay() != tc.delay {
				t.Errorf("ReserveN(2) at 1ns: OK %v, Delay %v; want OK %v, Delay %v", r.OK(), r.Delay(), tc.ok, tc.delay)
			}
		})
	}
}
