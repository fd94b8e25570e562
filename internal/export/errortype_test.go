package export

import (
	"context"
	"fmt"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resiliencehttp"
)

type downError struct{}

func (downError) Error() string { return "down" }

// TestErrorType: the name of the library's condition an error matches,
// else its Go type, looking through fmt.Errorf, errors.Join and a
// retry.Error (to its last attempt's error); "" for nil.
func TestErrorType(t *testing.T) {
	for i, c := range exporttest.ErrorTypes(t, downError{}, "export.downError") {
		if got := ErrorType(c.Err); got != c.Want {
			t.Errorf("%d: ErrorType(%v) = %q, want %q", i, c.Err, got, c.Want)
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

// TestErrorTypeHTTPStatus: the error.type of a resiliencehttp.StatusError,
// bare or wrapped, is its status code, found without allocating.
func TestErrorTypeHTTPStatus(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&resiliencehttp.StatusError{StatusCode: 503, Status: "503 Service Unavailable"}, "503"},
		{fmt.Errorf("get: %w", &resiliencehttp.StatusError{StatusCode: 429}), "429"},
	} {
		if got := ErrorType(c.err); got != c.want {
			t.Errorf("ErrorType(%v) = %q, want %q", c.err, got, c.want)
		}
		if n := testing.AllocsPerRun(100, func() { ErrorType(c.err) }); n != 0 {
			t.Errorf("ErrorType(%v): %v allocs, want 0", c.err, n)
		}
	}
}

// TestStatusTypeEnds: every status code from 100 to 599 is named from the
// table, without allocating; codes outside it are still their digits.
func TestStatusTypeEnds(t *testing.T) {
	for _, c := range []int{99, 100, 101, 503, 598, 599, 600, 1000, -1} {
		if got, want := statusType(c), fmt.Sprint(c); got != want {
			t.Errorf("statusType(%d) = %q, want %q", c, got, want)
		}
	}
	for _, c := range []int{100, 599} {
		if n := testing.AllocsPerRun(100, func() { _ = statusType(c) }); n != 0 {
			t.Errorf("statusType(%d): %v allocs, want 0", c, n)
		}
	}
}
