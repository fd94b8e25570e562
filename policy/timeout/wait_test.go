package timeout_test

import (
	"context"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
)

// The waits of this package's tests outside a synctest bubble are bounded
// by patience: a bound for failure only, never a measure of speed (each
// step takes microseconds), far below testwait.Patience so that a policy
// that never arms or never fires its deadline fails the test within
// seconds rather than hanging it past a mutation run's timeout.
const patience = 2 * time.Second

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	return testwait.RecvFor(t, ch, patience, what)
}

// blockUntil is clk.BlockUntil(n) bounded by patience.
func blockUntil(t *testing.T, clk *clock.Fake, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := clk.BlockUntil(ctx, n); err != nil {
		t.Fatalf("waited %v for %d timers on the fake clock (Waiters() = %d): %v", patience, n, clk.Waiters(), err)
	}
}
