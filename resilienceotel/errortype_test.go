package resilienceotel_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// TestErrorType: error.type is the name of the library's condition an
// error matches, else its Go type, looking through fmt.Errorf, errors.Join
// and a retry.Error (to its last attempt's error); no error, no attribute.
func TestErrorType(t *testing.T) {
	urlErr := &url.Error{Op: "Get", URL: "http://x", Err: errors.New("refused")}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		err  error
		want string // "" = no error.type attribute
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
		{timeoutErr(t), "timeout"},
		{context.DeadlineExceeded, "context.deadline_exceeded"},
		{ctx.Err(), "context.canceled"},
		{retry.ErrAttempts, "retry.attempts"},
		{retry.ErrMaxElapsed, "retry.max_elapsed"},
		{retry.ErrMaxWait, "retry.max_wait"},
		{retry.ErrBudgetExhausted, "retry.budget_exhausted"},
		{urlErr, "*url.Error"},
		{fmt.Errorf("fetch: %w", urlErr), "*url.Error"},
		{errors.Join(urlErr, downError{}), "*url.Error"},
		{downError{}, downType},
		{retryErr(t, downError{}), downType},
		{retryErr(t, resilience.Refuse(breaker.ErrOpen, "b", -1)), "breaker.open"},
		{fmt.Errorf("call: %w", retryErr(t, urlErr)), "*url.Error"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			m, reader := newMetrics(t)
			m.Observe(telemetry.Event{Type: telemetry.BreakerFailure, Name: "b", Err: c.err})
			want := []attribute.KeyValue{ptype("breaker"), pname("b"), event(telemetry.BreakerFailure)}
			if c.want != "" {
				want = append(want, errtype(c.want))
			}
			pts := collect(t, reader)["resilience.events"].Data.(metricdata.Sum[int64]).DataPoints
			if len(pts) != 1 {
				t.Fatalf("%d points, want 1", len(pts))
			}
			if diff := cmp.Diff(attrMap(attribute.NewSet(want...)), attrMap(pts[0].Attributes)); diff != "" {
				t.Errorf("error %v: attributes mismatch (-want +got):\n%s", c.err, diff)
			}
		})
	}
}

// timeoutErr is the error of a call that a timeout policy cut off.
func timeoutErr(t *testing.T) error {
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
func retryErr(t *testing.T, last error) error {
	t.Helper()
	_, err := retry.New[int](retry.WithAttempts(1)).Do(context.Background(), func(context.Context) (int, error) { return 0, last })
	var re *retry.Error
	if !errors.As(err, &re) {
		t.Fatalf("retry: err = %v, want a *retry.Error", err)
	}
	return err
}

// attrMap is a set of attributes as strings, for cmp.
func attrMap(s attribute.Set) map[string]string {
	out := make(map[string]string)
	for _, kv := range s.ToSlice() {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}
