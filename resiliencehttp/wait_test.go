package resiliencehttp_test

import (
	"context"
	"testing"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
)

// The waits of this package's tests are bounded by internal/testwait: a
// test fails with a message naming what did not happen instead of hanging.

const wait = testwait.Patience

func recv[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	return testwait.Recv(t, c, what)
}

func send[T any](t *testing.T, c chan<- T, v T, what string) {
	t.Helper()
	testwait.Send(t, c, v, what)
}

func blockUntil(t *testing.T, fake *clock.Fake, n int) { t.Helper(); testwait.BlockUntil(t, fake, n) }

// bounded is the context of a request whose exchange must not hang.
func bounded(t *testing.T) context.Context { return testwait.Context(t) }
