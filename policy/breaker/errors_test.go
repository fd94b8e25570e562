package breaker_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

func TestSentinelsAreRefusals(t *testing.T) {
	for _, err := range []error{breaker.ErrOpen, breaker.ErrTooManyTrials} {
		if !errors.Is(err, resilience.ErrRefused) {
			t.Errorf("%v does not match resilience.ErrRefused", err)
		}
	}
	if errors.Is(breaker.ErrOpen, breaker.ErrTooManyTrials) || errors.Is(breaker.ErrTooManyTrials, breaker.ErrOpen) {
		t.Error("ErrOpen and ErrTooManyTrials match each other")
	}
}

func TestRefusedErrors(t *testing.T) {
	b, f := newFake(breaker.WithName("payments"), breaker.WithThreshold(1), breaker.WithCooldown(12*time.Second))
	fail(t, b, f, 1)
	f.Advance(time.Second + time.Millisecond + time.Millisecond/2)
	_, open := b.Allow()
	f.Advance(11 * time.Second)
	_, _ = b.Allow() // the trial
	_, trials := b.Allow()
	b.ForceOpen()
	_, forced := b.Allow()
	unnamed, uf := newFake(breaker.WithThreshold(1))
	fail(t, unnamed, uf, 1)
	_, anon := unnamed.Allow()

	for _, c := range []struct {
		err        error
		sentinel   error
		msg        string
		retryAfter time.Duration
	}{
		{open, breaker.ErrOpen, "breaker: open (payments), retry after 10.999s", 10*time.Second + 999*time.Millisecond},
		{trials, breaker.ErrTooManyTrials, "breaker: too many trials (payments), retry after 12s", 12 * time.Second},
		{forced, breaker.ErrOpen, "breaker: open (payments), forced", 0},
		{anon, breaker.ErrOpen, "breaker: open, retry after 30s", 30 * time.Second},
	} {
		wrapped := fmt.Errorf("call: %w", c.err)
		var re *breaker.RefusedError
		if !errors.As(wrapped, &re) || re.Name != b.Name() && c.err != anon {
			t.Errorf("%v: errors.As gives %+v", c.err, re)
		}
		if !errors.Is(wrapped, c.sentinel) || !errors.Is(wrapped, resilience.ErrRefused) {
			t.Errorf("%v does not match %v and resilience.ErrRefused", c.err, c.sentinel)
		}
		if c.err.Error() != c.msg {
			t.Errorf("Error() = %q, want %q", c.err.Error(), c.msg)
		}
		if d, ok := resilience.RetryAfter(wrapped); !ok || d != c.retryAfter {
			t.Errorf("%v: RetryAfter = %v, %v; want %v", c.err, d, ok, c.retryAfter)
		}
	}
}
