package timeout_test

import (
	"context"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// patience is how long a test outside a synctest bubble waits for what
// should happen at once before it fails with a message: no test hangs until
// go test's limit.
const patience = 10 * time.Second

// recv returns the next value from ch, or fails the test if none comes
// within patience. what says what was awaited.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(patience):
		t.Fatalf("%s: nothing within %v", what, patience)
		panic("unreachable")
	}
}

// blockUntil waits until n timers are armed on clk, or fails the test
// after patience.
func blockUntil(t *testing.T, clk *clock.Fake, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := clk.BlockUntil(ctx, n); err != nil {
		t.Fatalf("%d timers not armed on the fake clock within %v: %v", n, patience, err)
	}
}
