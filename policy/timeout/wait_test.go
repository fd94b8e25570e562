package timeout_test

import (
	"testing"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
)

// The waits of this package's tests outside a synctest bubble are bounded
// by internal/testwait.

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	return testwait.Recv(t, ch, what)
}

func blockUntil(t *testing.T, clk *clock.Fake, n int) { t.Helper(); testwait.BlockUntil(t, clk, n) }
