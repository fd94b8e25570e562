package exporttest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// ErrorTypeCase is an error and the error.type the exporters give it:
// the name of the library's condition it matches, else its Go type; ""
// for nil.
type ErrorTypeCase struct {
	Err  error
	Want string
}

// ErrorTypes returns the cases of error.type: every guard's refusal, a
// custom refusal, a timeout, the context's errors, every retry give-up,
// a Go type, an HTTP status code (an error with an HTTPStatusCode
// method), and each of them looked for through fmt.Errorf, errors.Join
// and a retry.Error (to its last attempt's error). down is an error of
// the caller's own type, whose error.type is downType. The refusals carry
// no hint (resilience.RetryAfter finds none): error.type does not depend on
// it. ErrorTypes fails t if a timeout or a retry does not return the error
// it must.
func ErrorTypes(t testing.TB, down error, downType string) []ErrorTypeCase {
	t.Helper()
	urlErr := &url.Error{Op: "Get", URL: "http://x", Err: errors.New("refused")}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return []ErrorTypeCase{
		{nil, ""},
		{resilience.Refuse(breaker.ErrOpen, "b", -1), "breaker.open"},
		{resilience.Refuse(breaker.ErrForcedOpen, "b", -1), "breaker.forced_open"},
		{resilience.Refuse(breaker.ErrTooManyTrials, "b", -1), "breaker.too_many_trials"},
		{resilience.Refuse(bulkhead.ErrFull, "b", -1), "bulkhead.full"},
		{resilience.Refuse(bulkhead.ErrQueueTimeout, "b", -1), "bulkhead.queue_timeout"},
		{resilience.Refuse(ratelimit.ErrLimited, "b", -1), "ratelimit.limited"},
		{fmt.Errorf("get: %w", resilience.Refuse(breaker.ErrOpen, "b", -1)), "breaker.open"},
		{resilience.Refuse(fmt.Errorf("custom: %w", resilience.ErrRefused), "b", -1), "refused"},
		{timeoutErr(t), "timeout"},
		{context.DeadlineExceeded, "context.deadline_exceeded"},
		{ctx.Err(), "context.canceled"},
		{retry.ErrAttempts, "retry.attempts"},
		{retry.ErrMaxElapsed, "retry.max_elapsed"},
		{retry.ErrMaxWait, "retry.max_wait"},
		{retry.ErrBudgetExhausted, "retry.budget_exhausted"},
		{urlErr, "*url.Error"},
		{fmt.Errorf("fetch: %w", urlErr), "*url.Error"},
		{errors.Join(urlErr, down), "*url.Error"},
		{down, downType},
		{retryErr(t, down), downType},
		{retryErr(t, resilience.Refuse(breaker.ErrOpen, "b", -1)), "breaker.open"},
		{fmt.Errorf("call: %w", retryErr(t, urlErr)), "*url.Error"},
		{statusError(503), "503"},
		{fmt.Errorf("%w: reading its body: %w", statusError(502), down), "502"},
		{retryErr(t, statusError(429)), "429"},
		{statusError(999), "999"},
	}
}

// statusError is an HTTP failure of status code: an error with an
// HTTPStatusCode method, as a resiliencehttp.StatusError is.
type statusError int

func (e statusError) Error() string       { return "status " + strconv.Itoa(int(e)) }
func (e statusError) HTTPStatusCode() int { return int(e) }

// timeoutErr is the error of a call that a timeout policy cut off.
func timeoutErr(t testing.TB) error {
	t.Helper()
	_, err := timeout.New[int](1).Do(context.Background(), func(ctx context.Context) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	})
	if !errors.Is(err, timeout.ErrTimeout) {
		t.Fatalf("timeout: err = %v", err)
	}
	return err
}

// retryErr is the *retry.Error of a retry that gave up on last.
func retryErr(t testing.TB, last error) error {
	t.Helper()
	_, err := retry.New[int](retry.WithAttempts(1)).Do(context.Background(), func(context.Context) (int, error) { return 0, last })
	var re *retry.Error
	if !errors.As(err, &re) {
		t.Fatalf("retry: err = %v, want a *retry.Error", err)
	}
	return err
}
