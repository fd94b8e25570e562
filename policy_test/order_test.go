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
