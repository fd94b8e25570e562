package ratelimit_test

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

// Lowering the largest burst of a full bucket at a slow rate keeps it full
// at the new burst, although its tokens, counted in the new bucket's
// units, are beyond what an int64 holds.
func TestSetBurstFromTheLargestBurstKeepsAFullBucketFull(t *testing.T) {
	l := ratelimit.New(1, 1<<52, ratelimit.WithClock(clock.NewFake()))
	l.SetBurst(1)
	if got := l.Tokens(); got != 1 {
		t.Errorf("Tokens() = %v, want 1: full at the new burst", got)
	}
	if !l.Allow() || l.Allow() {
		t.Error("want one event admitted, then none")
	}
}

// inDebt returns a limiter whose reservations have taken tokens ahead up
// to the end of its time (maxElapsed): a debt of more units than the
// limiter's time holds.
func inDebt(t *testing.T, fake *clock.Fake) *ratelimit.Limiter {
	t.Helper()
	l := ratelimit.New(6e8, 1<<52, ratelimit.WithClock(fake)) // an interval of 1.67ns: 2 units a token
	for i := 0; ; i++ {
		if i == 2000 {
			t.Fatal("reservations still OK after 2000 of the whole burst")
		}
		if !l.ReserveN(1 << 52).OK() {
			return l
		}
	}
}

// A debt that the limiter's time (2^61 ns, 73 years) would not repay at
// the new rate (here a rate slower than the one it was taken at) stays a
// debt across the change: no token comes back before time stops.
func TestSetRateKeepsADebtBeyondTheEndOfTime(t *testing.T) {
	for _, rate := range []float64{1e8, ratelimit.Every(time.Second)} {
		fake := clock.NewFake()
		l := inDebt(t, fake)
		l.SetRate(rate)
		if got := l.Tokens(); got >= 0 {
			t.Errorf("rate %v: Tokens() = %v after SetRate, want a debt (< 0)", rate, got)
		}
		fake.Advance(1 << 61) // the end of the limiter's time
		if l.Allow() {
			t.Errorf("rate %v: Allow admitted at the end of time, with the debt unpaid", rate)
		}
	}
}

// Carried into no refill (Off), such a debt stays a debt too.
func TestSetRateOffKeepsAVastDebt(t *testing.T) {
	fake := clock.NewFake()
	l := inDebt(t, fake)
	l.SetRate(-1) // resilience.Off
	if got := l.Tokens(); got >= 0 {
		t.Errorf("Tokens() = %v after SetRate(Off), want a debt (< 0)", got)
	}
	if l.Allow() {
		t.Error("Allow admitted with the debt unpaid")
	}
}
