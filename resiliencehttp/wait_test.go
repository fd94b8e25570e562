package resiliencehttp_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
)

// The waits of this package's tests are bounded: a test fails with a
// message naming what did not happen instead of hanging. The bound is for
// failure only, never an assertion of speed: what the tests wait for
// takes microseconds (an exchange over the loopback network, a goroutine
// that returns), and a bound well under the mutation harness's timeout
// makes a change that leaves them waiting fail as a test failure, not a
// hang.
const wait = 2 * time.Second

func recv[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	return testwait.RecvFor(t, c, wait, what)
}

func send[T any](t *testing.T, c chan<- T, v T, what string) {
	t.Helper()
	select {
	case c <- v:
	case <-time.After(wait):
		t.Fatalf("waited %v to send %s", wait, what)
	}
}

func blockUntil(t *testing.T, fake *clock.Fake, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := fake.BlockUntil(ctx, n); err != nil {
		t.Fatalf("waited %v for %d timers or sleepers on the fake clock (Waiters() = %d): %v", wait, n, fake.Waiters(), err)
	}
}

// bounded is the context of a request whose exchange must not hang.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeoutCause(context.Background(), wait, fmt.Errorf("test: did not end within %v", wait))
	t.Cleanup(cancel)
	return ctx
}
