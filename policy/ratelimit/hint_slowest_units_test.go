package ratelimit_test

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

// A refusal's RetryAfter is the wait until the tokens are there, also in
// the coarsest units a limiter has. With a burst of 2^52 a token is 512
// units (Burst·units must fit 2^61); at one event every 2^71ns a unit is
// then 2^62ns, so the time in units is floor(ns/2^62). A bucket of one
// event a second and the same burst counts in units of 1/512 of a token;
// SetRate carries its fraction of a token over, and a Wait then needs the
// rest: for a token 1 unit away the time in units must reach 1, which it
// does at 2^62ns since the origin and not a nanosecond before; a token 5
// units away is 5·2^62ns away, more than a Duration holds: Never.
func TestRefusalHintInUnitsOf2To62ns(t *testing.T) {
	const burst = 1 << 52
	const unit = time.Second / 512 // a unit of Every(time.Second) at this burst
	for _, tc := range []struct {
		units int64 // units of a token the bucket holds (of 512)
		want  time.Duration
	}{
		{511, 1<<62 - (511*unit + 1)},
		{507, resilience.Never},
	} {
		fake := clock.NewFake()
		l := ratelimit.New(ratelimit.Every(time.Second), burst, ratelimit.WithClock(fake))
		if !l.AllowN(burst) {
			t.Fatal("AllowN(Burst) refused on a full bucket")
		}
		fake.Advance(time.Duration(tc.units)*unit + 1) // tc.units refilled (and 1ns, off the unit's edge)
		l.SetRate(1e9 / (1 << 71))
		err := returns(t, "a Wait for a token beyond the limiter's time", func() error { return l.Wait(t.Context()) })
		if hint, ok := resilience.RetryAfter(err); !ok || hint != tc.want {
			t.Errorf("%d/512 of a token: Wait = %v, RetryAfter %v; want a refusal with RetryAfter %v", tc.units, err, hint, tc.want)
		}
	}
}
