package retry_test

import (
	"testing"

	"github.com/f0b5b96b/resilience/policy/retry"
)

// An Error with no Err (made by hand; the policy always sets it) still
// reads as one, with "<nil>" for the missing message, as fmt would print it.
func TestErrorWithoutErr(t *testing.T) {
	e := &retry.Error{Attempts: 2, Reason: retry.ErrAttempts}
	if got, want := e.Error(), "retry: gave up after 2 attempts: <nil>"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
