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
