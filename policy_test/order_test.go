package policytest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// Regression: in the recommended order (fallback > retry > hedge > breaker
// > timeout), an open breaker made every call wait out its cooldown (3s,
// past the retry's MaxElapsed) before the fallback answered: the hedge
// took the refusal's RetryAfter for pushback and held the call until it
// ended, and a refusal for a full trial set held it for the TrialTimeout.
// A refusal fails fast: the hedge returns it at once, the retry sees that
// the cooldown does not fit MaxElapsed, and the fallback answers.
func TestRecommendedOrderFailsFastBehindAnOpenBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := breaker.New(breaker.WithCooldown(3*time.Second), breaker.WithThreshold(1))
		var fellBack atomic.Int32
		fb := func(ctx context.Context, err error) (float64, error) {
			if !errors.Is(err, resilience.ErrRefused) && !errors.Is(err, errOp) {
				t.Errorf("fallback got %v, want a refusal or the op's error", err)
			}
			fellBack.Add(1)
			return -1, nil
		}
		p := resilience.Then(resilience.Fallback(fb),
			retry.New[float64](retry.WithMaxElapsed(2*time.Second)),
			hedge.New[float64](50*time.Millisecond),
			breaker.Policy[float64](b),
			timeout.New[float64](200*time.Millisecond))
		var calls atomic.Int32
		failing := func(ctx context.Context) (float64, error) { calls.Add(1); return 0, errOp }
		hanging := func(ctx context.Context) (float64, error) { calls.Add(1); <-ctx.Done(); return 0, ctx.Err() }

		do := func(what string, op resilience.Op[float64]) {
			t.Helper()
			fellBack.Store(0)
			start := time.Now()
			v, err := p.Do(context.Background(), op)
			if got := time.Since(start); got != 0 || v != -1 || err != nil || fellBack.Load() != 1 {
				t.Errorf("%s: Do = %v, %v after %v, %d fallbacks; want the fallback's -1, nil at once", what, v, err, got, fellBack.Load())
			}
		}
		do("the call that opens the breaker", failing) // its hedge is refused
		if calls.Load() != 1 || b.State() != breaker.Open {
			t.Fatalf("%d op calls, breaker %v; want 1 call and an open breaker", calls.Load(), b.State())
		}
		for range 3 {
			do("a call while the breaker is open", failing)
		}
		if calls.Load() != 1 {
			t.Errorf("the op was called %d times in all, want once (the breaker is open)", calls.Load())
		}

		// After the cooldown, one trial runs (and hangs until its timeout);
		// a call during it is refused for the full trial set and falls
		// back at once, though that refusal's hint is the TrialTimeout.
		time.Sleep(3 * time.Second)
		trial := make(chan struct{})
		go func() {
			defer close(trial)
			_, _ = p.Do(context.Background(), hanging)
		}()
		time.Sleep(10 * time.Millisecond)
		do("a call during the trial", failing)
		select {
		case <-trial:
		case <-time.After(10 * time.Second):
			t.Fatal("the trial call did not return within 10s")
		}
	})
}

// Regression: in the recommended order retry > breaker > timeout, with a
// 1s cooldown and the retry's defaults, every call while the breaker was
// open waited out the rest of the cooldown (870-1001ms) and then ran the
// trial: the retry took the refusal's Retry-After hint for a server's and
// waited for it. A refusal whose hint is longer than the retry's
// MaxRefusalWait comes back at once: callers fail fast while the breaker
// is open, and the first call after the cooldown is its trial and
// recovers.
func TestRetryOutsideBreakerFailsFastWhileOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := breaker.New(breaker.WithCooldown(time.Second), breaker.WithThreshold(3))
		p := resilience.Then(
			retry.New[int](),
			breaker.Policy[int](b),
			timeout.New[int](200*time.Millisecond))
		var calls atomic.Int32
		var down atomic.Bool
		down.Store(true)
		op := func(ctx context.Context) (int, error) {
			calls.Add(1)
			if down.Load() {
				return 0, errOp
			}
			return 42, nil
		}

		// Three attempts of one call trip the breaker.
		if _, err := p.Do(context.Background(), op); !errors.Is(err, errOp) || b.State() != breaker.Open {
			t.Fatalf("first call: err %v, breaker %v; want the op's error and an open breaker", err, b.State())
		}
		// While it is open, calls fail fast with the refusal, and the op
		// is not called: not at once after it opened, not mid-cooldown,
		// not 200ms before its end.
		calls.Store(0)
		for _, at := range []time.Duration{0, 500 * time.Millisecond, 300 * time.Millisecond} {
			time.Sleep(at)
			start := time.Now()
			_, err := p.Do(context.Background(), op)
			if took := time.Since(start); took != 0 || !errors.Is(err, breaker.ErrOpen) {
				t.Errorf("a call while open: err %v after %v; want breaker.ErrOpen at once", err, took)
			}
			var re *resilience.RefusedError
			if !errors.As(err, &re) || re.RetryAfter() <= 0 {
				t.Errorf("a call while open: err %v, want a RefusedError with the rest of the cooldown", err)
			}
		}
		if calls.Load() != 0 {
			t.Errorf("the op was called %d times while the breaker was open, want 0", calls.Load())
		}

		// After the cooldown the dependency is back: the next call is the
		// trial, succeeds, and closes the breaker.
		time.Sleep(200 * time.Millisecond)
		down.Store(false)
		start := time.Now()
		if v, err := p.Do(context.Background(), op); v != 42 || err != nil || time.Since(start) != 0 {
			t.Errorf("after the cooldown: Do = %d, %v after %v; want 42, nil at once", v, err, time.Since(start))
		}
		if b.State() != breaker.Closed || calls.Load() != 1 {
			t.Errorf("after the cooldown: breaker %v, %d op calls; want closed after 1 call", b.State(), calls.Load())
		}
	})
}
