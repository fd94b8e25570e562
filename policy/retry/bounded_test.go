package retry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/retry"
)

// bound is how long a test waits for a call that should return at once,
// before it fails: a bound for failure only, never a measure of speed.
const bound = 2 * time.Second

// A Retry-After hint longer than MaxWait (10 s by default) ends the call at
// once, on the real clock too: the policy gives up rather than sleep that
// long (a 429 asking for 16m40s).
func TestHintBeyondMaxWaitGivesUpAtOnce(t *testing.T) {
	p := retry.New[string]()
	done := make(chan error, 1)
	go func() {
		_, err := p.Do(context.Background(), func(context.Context) (string, error) {
			return "", tooMany{1000 * time.Second}
		})
		done <- err
	}()
	if err := testwait.RecvFor(t, done, bound, "Do to give up on a hint of 16m40s"); !errors.Is(err, retry.ErrMaxWait) {
		t.Errorf("Do = %v, want an error matching ErrMaxWait", err)
	}
}
