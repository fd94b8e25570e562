package resilienceredis

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// openRetryAfter returns the hint of err, a refusal matching
// breaker.ErrOpen.
func openRetryAfter(t *testing.T, err error) time.Duration {
	t.Helper()
	if !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("Allow: %v, want a refusal matching breaker.ErrOpen", err)
	}
	d, ok := resilience.RetryAfter(err)
	if !ok {
		t.Fatalf("Allow: %v carries no RetryAfter, want the rest of the cooldown", err)
	}
	return d
}

// refusedUntil checks that b refuses its calls with ErrOpen and a
// RetryAfter of the rest of a cooldown of 1s that started at start (the
// rest rounded up to a millisecond), at the given times into it, and that
// State reads open; then that at the end of the cooldown State reads want
// and a call is admitted. The clock is the bubble's.
func refusedUntil(t *testing.T, b *Breaker, start time.Time, want breaker.State) {
	t.Helper()
	for _, c := range []struct {
		at, retry time.Duration
	}{
		{0, time.Second},
		{time.Second/2 + 1, time.Second / 2},
		{time.Second - time.Millisecond, time.Millisecond},
		{time.Second - time.Millisecond + 1, time.Millisecond},
		{time.Second - 1, time.Millisecond},
	} {
		time.Sleep(time.Until(start.Add(c.at)))
		if s := b.State(); s != breaker.Open {
			t.Errorf("%v into a cooldown of 1s: State %v, want open", c.at, s)
		}
		_, err := b.Allow()
		if got := openRetryAfter(t, err); got != c.retry {
			t.Errorf("%v into a cooldown of 1s: RetryAfter %v, want %v", c.at, got, c.retry)
		}
	}
	time.Sleep(time.Until(start.Add(time.Second)))
	if s := b.State(); s != want {
		t.Errorf("at the end of the cooldown: State %v, want %v", s, want)
	}
	p, err := b.Allow()
	if err != nil {
		t.Fatalf("at the end of the cooldown: Allow: %v, want admitted", err)
	}
	p.Report(breaker.Ignored)
}

// A cooldown the instance holds, its own (after Threshold consecutive
// failures of its own) or learnt from Redis, refuses calls until it ends
// and no longer: up to its last nanosecond a call is refused with the rest
// as RetryAfter, rounded up to a millisecond; at its end the call is
// admitted. The instance's clock is the bubble's, moved to the nanosecond;
// no round trip reaches a server (each one fails).
func TestBreakerCooldownEndsOnTime(t *testing.T) {
	t.Run("held after Threshold failures of its own", func(t *testing.T) {
		rdb := newScripted(t, nil)
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(rdb.Client, "svc", []BreakerOption{WithThreshold(2), WithCooldown(time.Second)})
			defer b.Close()
			time.Sleep(time.Hour) // the instance's clock is an hour past its start
			fail(b)
			fail(b)
			refusedUntil(t, b, time.Now(), breaker.Closed)
			if n := rdb.count(nil); n != 0 {
				t.Errorf("%d round trips, want none: a hold and its end are the instance's own", n)
			}
		})
	})
	t.Run("open, learnt from Redis", func(t *testing.T) {
		rdb := newScripted(t, nil)
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(rdb.Client, "svc", []BreakerOption{WithCooldown(time.Second)})
			defer b.Close()
			time.Sleep(time.Hour)
			b.receive("7 2 1 1000000") // another instance tripped the breaker: open for 1s
			refusedUntil(t, b, time.Now(), breaker.HalfOpen)
			// The call at the end asked Redis for a trial (which failed:
			// the local breaker admitted it).
			if n := rdb.count(acquireScript); n != 1 {
				t.Errorf("%d round trips for a trial, want 1 (at the end of the cooldown)", n)
			}
		})
	})
}
