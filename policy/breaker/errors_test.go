package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
)

// never is the largest Duration: the Retry-After hint of "no retry will do".
const never = time.Duration(math.MaxInt64)

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
		{forced, breaker.ErrOpen, "breaker: forced open (payments), retry never", never},
		{anon, breaker.ErrOpen, "breaker: open, retry after 30s", 30 * time.Second},
	} {
		wrapped := fmt.Errorf("call: %w", c.err)
		var re *resilience.RefusedError
		if !errors.As(wrapped, &re) || re.Name() != b.Name() && c.err != anon {
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

func TestForcedOpenRetryAfterIsNever(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1))
	b.ForceOpen()
	_, fast := b.Allow() // refused without the lock
	f.Advance(time.Hour) // no cooldown ends a forced opening
	_, late := b.Allow()
	_, viaPolicy := breaker.Policy[int](b).Do(context.Background(), func(context.Context) (int, error) { return 1, nil })
	for _, err := range []error{fast, late, viaPolicy} {
		if d, ok := resilience.RetryAfter(err); !errors.Is(err, breaker.ErrOpen) || !ok || d != never {
			t.Errorf("%v: RetryAfter = %v, %v; want %v (never)", err, d, ok, never)
		}
	}
}

func TestRetryStopsAtOnceOnAForcedOpenBreaker(t *testing.T) {
	b, f := newFake()
	b.ForceOpen()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var waits []time.Duration
	p := retry.New[int](retry.WithAttempts(5), retry.WithClock(f), retry.WithOnRetry(func(_ int, _ error, wait time.Duration) {
		waits = append(waits, wait)
		cancel() // so that the wait on the fake clock ends at once
	})).Then(breaker.Policy[int](b))
	_, err := p.Do(ctx, func(context.Context) (int, error) { return 0, nil })
	if !errors.Is(err, breaker.ErrOpen) || len(waits) != 0 {
		t.Fatalf("Do = %v after waiting %v; want ErrOpen without a wait", err, waits)
	}
}
