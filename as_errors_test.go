package resilience_test

import (
	"context"
	"errors"
	"testing"

	"github.com/f0b5b96b/resilience"
)

// As's error for a result of the wrong type: without an error from the
// policy it says only that; with one, it also wraps it.
func TestAsWrongTypeErrorMessages(t *testing.T) {
	errDep := errors.New("down")
	op := func(context.Context) (int, error) { return 0, errDep }
	ok := resilience.Policy[any]{}.Fallback(func(context.Context, error) (any, error) { return "cached", nil })
	if _, err := resilience.As[int](ok).Do(context.Background(), op); err == nil || err.Error() != "resilience: As[int]: policy returned a string" {
		t.Errorf("As[int] with a string result and no error: err = %v, want %q", err, "resilience: As[int]: policy returned a string")
	}
	failing := resilience.Policy[any]{}.Fallback(func(_ context.Context, err error) (any, error) { return "partial", err })
	if _, err := resilience.As[int](failing).Do(context.Background(), op); err == nil || err.Error() != "resilience: As[int]: policy returned a string: down" || !errors.Is(err, errDep) {
		t.Errorf("As[int] with a string result and an error: err = %v, want %q wrapping %v", err, "resilience: As[int]: policy returned a string: down", errDep)
	}
}

// A nil result from the shared policy (a fallback's nil) is the zero T,
// with the policy's error as it is.
func TestAsNilResultIsTheZeroT(t *testing.T) {
	errStale := errors.New("stale")
	for _, want := range []error{nil, errStale} {
		p := resilience.Policy[any]{}.Fallback(func(context.Context, error) (any, error) { return nil, want })
		n, err := resilience.As[int](p).Do(context.Background(), func(context.Context) (int, error) { return 5, errors.New("down") })
		if n != 0 || err != want {
			t.Errorf("As[int] with a nil result and error %v = %d, %v; want 0, %v", want, n, err, want)
		}
	}
}
