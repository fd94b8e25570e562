package export

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

type downError struct{}

func (downError) Error() string { return "down" }

// TestErrorType: the name of the library's condition an error matches,
// else its Go type, looking through fmt.Errorf, errors.Join and a
// retry.Error (to its last attempt's error); "" for nil.
func TestErrorType(t *testing.T) {
	urlErr := &url.Error{Op: "Get", URL: "http://x", Err: errors.New("refused")}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, timeoutErr := timeout.New[int](1).Do(context.Background(), func(ctx context.Context) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	})
	retryErr := func(last error) error {
		_, err := retry.New[int](retry.WithAttempts(1)).Do(context.Background(), func(context.Context) (int, error) { return 0, last })
		var re *retry.Error
		if !errors.As(err, &re) {
			t.Fatalf("retry: err = %v, want a *retry.Error", err)
		}
		return err
	}
	for i, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{resilience.Refuse(breaker.ErrOpen, "b", -1), "breaker.open"},
		{resilience.Refuse(breaker.ErrForcedOpen, "b", -1), "breaker.forced_open"},
		{resilience.Refuse(breaker.ErrTooManyTrials, "b", -1), "breaker.too_many_trials"},
		{resilience.Refuse(bulkhead.ErrFull, "b", -1), "bulkhead.full"},
		{resilience.Refuse(bulkhead.ErrQueueTimeout, "b", -1), "bulkhead.queue_timeout"},
		{resilience.Refuse(ratelimit.ErrLimited, "b", -1), "ratelimit.limited"},
		{fmt.Errorf("get: %w", resilience.Refuse(breaker.ErrOpen, "b", -1)), "breaker.open"},
		{resilience.Refuse(fmt.Errorf("custom: %w", resilience.ErrRefused), "b", -1), "refused"},
		{timeoutErr, "timeout"},
		{context.DeadlineExceeded, "context.deadline_exceeded"},
		{ctx.Err(), "context.canceled"},
		{retry.ErrAttempts, "retry.attempts"},
		{retry.ErrBudgetExhausted, "retry.budget_exhausted"},
		{urlErr, "*url.Error"},
		{fmt.Errorf("fetch: %w", urlErr), "*url.Error"},
		{errors.Join(urlErr, downError{}), "*url.Error"},
		{downError{}, "export.downError"},
		{retryErr(downError{}), "export.downError"},
		{retryErr(resilience.Refuse(breaker.ErrOpen, "b", -1)), "breaker.open"},
	} {
		if got := ErrorType(c.err); got != c.want {
			t.Errorf("%d: ErrorType(%v) = %q, want %q", i, c.err, got, c.want)
		}
	}
}

// TestErrorTypeAllocs: the type of a guard's refusal and of a sentinel is
// found without allocating.
func TestErrorTypeAllocs(t *testing.T) {
	for _, err := range []error{resilience.Refuse(bulkhead.ErrFull, "b", -1), retry.ErrAttempts, context.Canceled} {
		if n := testing.AllocsPerRun(100, func() { ErrorType(err) }); n != 0 {
			t.Errorf("ErrorType(%v): %v allocs, want 0", err, n)
		}
	}
}
