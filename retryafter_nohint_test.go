package resilience_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/f0b5b96b/resilience"
)

// An error tree without a hint, joined or not, reports 0 and false.
func TestRetryAfterNoHintIsZeroFalse(t *testing.T) {
	for _, err := range []error{
		nil,
		errors.New("plain"),
		errors.Join(errors.New("a"), errors.New("b")),
		fmt.Errorf("wrapped: %w", errors.Join(errors.New("a"), hintError{-1})),
	} {
		if d, ok := resilience.RetryAfter(err); d != 0 || ok {
			t.Errorf("RetryAfter(%v) = %v, %v; want 0, false", err, d, ok)
		}
	}
}
