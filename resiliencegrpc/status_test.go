package resiliencegrpc_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func errorsAs[T any](err error, target *T) bool { return errors.As(err, target) }

func TestParsePushback(t *testing.T) {
	type result struct {
		D  time.Duration
		OK bool
	}
	tests := []struct {
		values []string
		want   result
	}{
		{nil, result{0, false}},
		{[]string{"0"}, result{0, true}},
		{[]string{"250"}, result{250 * time.Millisecond, true}},
		{[]string{" 7 "}, result{7 * time.Millisecond, true}},
		{[]string{"-1"}, result{resilience.Never, true}},
		{[]string{"-9223372036854775809"}, result{resilience.Never, true}},
		{[]string{"1.5"}, result{resilience.Never, true}},
		{[]string{""}, result{resilience.Never, true}},
		{[]string{"soon"}, result{resilience.Never, true}},
		{[]string{"1", "2"}, result{resilience.Never, true}},
		{[]string{"99999999999999999999"}, result{resilience.Never - 1, true}},
		{[]string{"9223372036854"}, result{resilience.Never - 1, true}},
	}
	for _, tt := range tests {
		d, ok := resiliencegrpc.ParsePushback(tt.values)
		if diff := cmp.Diff(tt.want, result{d, ok}); diff != "" {
			t.Errorf("ParsePushback(%q) mismatch (-want +got):\n%s", tt.values, diff)
		}
	}
}

func TestIsFailure(t *testing.T) {
	var failures []codes.Code
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if resiliencegrpc.IsFailure(status.New(c, "")) {
			failures = append(failures, c)
		}
	}
	want := []codes.Code{codes.Unknown, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Internal, codes.Unavailable}
	if diff := cmp.Diff(want, failures); diff != "" {
		t.Errorf("failure codes mismatch (-want +got):\n%s", diff)
	}
}

// A status without pushback (After 0) gives no hint: RetryAfter reports none.
func TestStatusError(t *testing.T) {
	tests := []struct {
		err  *resiliencegrpc.StatusError
		want string
	}{
		{&resiliencegrpc.StatusError{Status: status.New(codes.Unavailable, "down")}, "resiliencegrpc: Unavailable: down"},
		{&resiliencegrpc.StatusError{Status: status.New(codes.Internal, ""), After: 2 * time.Second}, "resiliencegrpc: Internal (retry after 2s)"},
		{&resiliencegrpc.StatusError{Status: status.New(codes.ResourceExhausted, "busy"), After: resilience.Never}, "resiliencegrpc: ResourceExhausted: busy (retry never)"},
		{&resiliencegrpc.StatusError{Status: status.New(codes.ResourceExhausted, "resource exhausted: retry after 198ms"), After: 198 * time.Millisecond}, "resiliencegrpc: ResourceExhausted: resource exhausted: retry after 198ms"},
		{&resiliencegrpc.StatusError{Status: status.New(codes.Unavailable, "unavailable: retry never"), After: resilience.Never}, "resiliencegrpc: Unavailable: unavailable: retry never"},
		{&resiliencegrpc.StatusError{Status: status.New(codes.Unavailable, "down: retry after 1s"), After: 2 * time.Second}, "resiliencegrpc: Unavailable: down: retry after 1s (retry after 2s)"},
		{&resiliencegrpc.StatusError{Status: status.New(codes.Unavailable, "down"), After: time.Nanosecond}, "resiliencegrpc: Unavailable: down (retry after 1ns)"},
	}
	for _, tt := range tests {
		wrapped := fmt.Errorf("outer: %w", tt.err)
		after, ok := resilience.RetryAfter(wrapped)
		got := []any{tt.err.Error(), status.Code(wrapped), after, ok}
		if diff := cmp.Diff([]any{tt.want, tt.err.Status.Code(), tt.err.After, tt.err.After > 0}, got); diff != "" {
			t.Errorf("message, code through wrapping, RetryAfter mismatch (-want +got):\n%s", diff)
		}
	}
}

func TestRefusalStatus(t *testing.T) {
	type result struct {
		Code     codes.Code
		Message  string
		Pushback []string
		Delay    time.Duration
		HasDelay bool
	}
	tests := []struct {
		name  string
		err   error
		want  result
		named string // the message WithGuardNames
	}{
		{"rate limit", resilience.Refuse(ratelimit.ErrLimited, "api", 1500*time.Millisecond),
			result{codes.ResourceExhausted, "resource exhausted: retry after 1.5s", []string{"1500"}, 1500 * time.Millisecond, true}, "ratelimit: limited (api): retry after 1.5s"},
		{"rounded up", resilience.Refuse(ratelimit.ErrLimited, "", 1200*time.Microsecond),
			result{codes.ResourceExhausted, "resource exhausted: retry after 2ms", []string{"2"}, 2 * time.Millisecond, true}, "ratelimit: limited: retry after 2ms"},
		{"never", resilience.Refuse(ratelimit.ErrLimited, "", resilience.Never),
			result{codes.ResourceExhausted, "resource exhausted: retry never", []string{"-1"}, -time.Millisecond, true}, "ratelimit: limited: retry never"},
		{"rounded up from 1ns", resilience.Refuse(ratelimit.ErrLimited, "", time.Nanosecond),
			result{codes.ResourceExhausted, "resource exhausted: retry after 1ms", []string{"1"}, time.Millisecond, true}, "ratelimit: limited: retry after 1ms"},
		{"hint of 0", resilience.Refuse(ratelimit.ErrLimited, "", 0),
			result{codes.ResourceExhausted, "resource exhausted: retry after 1s", []string{"1000"}, time.Second, true}, "ratelimit: limited: retry after 1s"},
		{"no hint", resilience.Refuse(bulkhead.ErrFull, "db", -1),
			result{codes.Unavailable, "unavailable: retry after 1s", []string{"1000"}, time.Second, true}, "bulkhead: full (db): retry after 1s"},
		{"other error", errors.New("boom"),
			result{codes.Unavailable, "unavailable: retry after 1s", []string{"1000"}, time.Second, true}, "boom: retry after 1s"},
		{"caller gone", context.Canceled, result{codes.Canceled, "canceled", nil, 0, false}, "context canceled"},
		{"caller's deadline", context.DeadlineExceeded, result{codes.DeadlineExceeded, "deadline exceeded", nil, 0, false}, "context deadline exceeded"},
	}
	for _, tt := range tests {
		st, md := resiliencegrpc.RefusalStatus(tt.err)
		delay, ok := retryDelay(st.Err())
		if diff := cmp.Diff(tt.want, result{st.Code(), st.Message(), md.Get(resiliencegrpc.PushbackKey), delay, ok}); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", tt.name, diff)
		}
		named, _ := resiliencegrpc.RefusalStatus(tt.err, resiliencegrpc.WithGuardNames())
		if diff := cmp.Diff([]any{tt.want.Code, tt.named}, []any{named.Code(), named.Message()}); diff != "" {
			t.Errorf("%s WithGuardNames: code, message mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}
