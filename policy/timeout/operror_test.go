package timeout_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// hinted is an op error with a Retry-After hint.
type hinted struct{ d time.Duration }

func (h hinted) Error() string             { return "503 busy" }
func (h hinted) RetryAfter() time.Duration { return h.d }

// Regression: on expiry the policy returned the bare ErrTimeout error and
// dropped the op's own error, and with it a Permanent mark, the
// op's identity for errors.Is/As, and its Retry-After hint.
func TestExpiryWrapsOpError(t *testing.T) {
	errOp := errors.New("op failed")
	op := func(ctx context.Context) (int, error) {
		<-ctx.Done()
		return 3, resilience.Permanent(fmt.Errorf("%w (%w)", errOp, hinted{time.Minute}))
	}
	check := func(t *testing.T, v int, err error) {
		t.Helper()
		if v != 3 {
			t.Errorf("v = %d, want the op's 3", v)
		}
		checkExpired(t, err, "timeout: call exceeded 1s: op failed (503 busy)")
		if !errors.Is(err, errOp) {
			t.Errorf("err = %v, want it to match the op's error", err)
		}
		if d, ok := resilience.RetryAfter(err); !ok || d != time.Minute {
			t.Errorf("RetryAfter(err) = %v, %v; want 1m, true", d, ok)
		}
	}
	synctest.Test(t, func(t *testing.T) {
		v, err := timeout.New[int](time.Second).Do(context.Background(), op)
		check(t, v, err)
	})
	// WithAbandon returns at the deadline: it keeps the op's result only if
	// the op has returned by the time the policy sees the deadline, which
	// for an op that returns as soon as its context ends is a race. Either
	// way the error is a timeout; when it has the op's error, it has all of
	// it.
	synctest.Test(t, func(t *testing.T) {
		p := timeout.New[int](time.Second, timeout.WithAbandon(true))
		for range 10 {
			v, err := p.Do(context.Background(), op)
			if errors.Is(err, errOp) {
				check(t, v, err)
			} else {
				checkExpired(t, err, "timeout: call exceeded 1s")
			}
		}
		synctest.Wait()
	})
}

// Regression: a retry around a timeout retried a Permanent error that the
// op returned after the deadline; and an outer timeout around a retry hid
// the retry's Error.
func TestExpiryKeepsRetryVerdicts(t *testing.T) {
	errOp := errors.New("op failed")
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		p := resilience.Then(retry.New[int](retry.WithAttempts(3)), timeout.New[int](time.Second))
		_, err := p.Do(context.Background(), func(ctx context.Context) (int, error) {
			calls++
			<-ctx.Done()
			return 0, retry.Permanent(errOp)
		})
		if calls != 1 || !errors.Is(err, timeout.ErrTimeout) || !errors.Is(err, errOp) {
			t.Errorf("retry > timeout: %d calls, err = %v; want 1 call and an error matching ErrTimeout and the op's", calls, err)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// No waits between attempts: the third attempt runs from 800ms to
		// 1.2s, across the timeout.
		p := resilience.Then(timeout.New[int](time.Second), retry.New[int](retry.WithAttempts(3), retry.WithBackoff(backoff.Schedule{})))
		_, err := p.Do(context.Background(), func(ctx context.Context) (int, error) {
			time.Sleep(400 * time.Millisecond)
			return 0, errOp
		})
		var re *retry.Error
		if !errors.As(err, &re) || !errors.Is(err, errOp) || !errors.Is(err, timeout.ErrTimeout) {
			t.Errorf("timeout > retry: err = %v; want a *retry.Error matching the op's error and ErrTimeout", err)
		}
	})
}
