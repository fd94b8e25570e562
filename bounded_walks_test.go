package resilience_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
)

// returns runs f on a goroutine of its own and fails the test if it has
// not returned within 2 s, saying what did not: a bound for failure only,
// never one of speed. A walk of the layers or of an error tree that never
// ends (a chain linked back to itself, an Unwrap not followed) then fails
// the test instead of hanging it; the goroutine is left running.
func returns(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatalf("%s did not return after 2s", what)
	}
}

// RetryAfter walks the chain of an error wrapped with %w down to its end,
// and returns: with the hint at the bottom, or with none. (This file's
// name sorts it before the tests that call RetryAfter through pipelines,
// whose own waits are far longer.)
func TestRetryAfterWalksAWrappedChainToItsEnd(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		want   time.Duration
		wantOK bool
	}{
		{"a hint under three wraps", fmt.Errorf("a: %w", fmt.Errorf("b: %w", fmt.Errorf("c: %w", hintError{7 * time.Second}))), 7 * time.Second, true},
		{"no hint under three wraps", fmt.Errorf("a: %w", fmt.Errorf("b: %w", fmt.Errorf("c: %w", errors.New("down")))), 0, false},
	} {
		var (
			d  time.Duration
			ok bool
		)
		returns(t, "RetryAfter of "+c.name, func() { d, ok = resilience.RetryAfter(c.err) })
		if d != c.want || ok != c.wantOK {
			t.Errorf("RetryAfter of %s = %v, %v; want %v, %v", c.name, d, ok, c.want, c.wantOK)
		}
	}
}
