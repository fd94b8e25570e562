package resilience_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
)

type hintError struct{ after time.Duration }

func (e hintError) Error() string             { return fmt.Sprintf("come back in %v", e.after) }
func (e hintError) RetryAfter() time.Duration { return e.after }

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		want   time.Duration
		wantOK bool
	}{
		{"nil", nil, 0, false},
		{"plain", errors.New("x"), 0, false},
		{"direct", hintError{2 * time.Second}, 2 * time.Second, true},
		{"wrapped", fmt.Errorf("call: %w", hintError{time.Second}), time.Second, true},
		{"joined", errors.Join(errors.New("a"), hintError{3 * time.Millisecond}), 3 * time.Millisecond, true},
		{"first in chain wins", fmt.Errorf("%w", hintError{1}), 1, true},
		{"negative is zero", hintError{-time.Second}, 0, true},
	}
	for _, tt := range tests {
		d, ok := resilience.RetryAfter(tt.err)
		if d != tt.want || ok != tt.wantOK {
			t.Errorf("%s: RetryAfter = %v, %v; want %v, %v", tt.name, d, ok, tt.want, tt.wantOK)
		}
	}
}

func TestRetryAfterWalksTheTreeDepthFirst(t *testing.T) {
	// errors.Join(a, b) where a wraps no hint and b wraps two: the first hint
	// in depth-first order wins.
	err := errors.Join(
		fmt.Errorf("a: %w", errors.New("no hint")),
		fmt.Errorf("b: %w", errors.Join(hintError{5}, hintError{6})),
	)
	if d, ok := resilience.RetryAfter(err); d != 5 || !ok {
		t.Errorf("RetryAfter = %v, %v; want 5ns, true", d, ok)
	}
}

func TestRetryAfterDoesNotAllocate(t *testing.T) {
	err := fmt.Errorf("outer: %w", errors.Join(errors.New("x"), &ptrHint{time.Second}))
	if n := testing.AllocsPerRun(100, func() { _, _ = resilience.RetryAfter(err) }); n != 0 {
		t.Errorf("RetryAfter allocates %v times per call, want 0", n)
	}
}

type ptrHint struct{ after time.Duration }

func (e *ptrHint) Error() string             { return "hint" }
func (e *ptrHint) RetryAfter() time.Duration { return e.after }
