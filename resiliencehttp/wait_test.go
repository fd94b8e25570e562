package resiliencehttp_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// wait is how long a test waits for something that should happen at once
// before it fails with a message.
const wait = 10 * time.Second

// recv waits for c, or fails the test with what did not happen.
func recv[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(wait):
		t.Fatalf("after %v: %s", wait, what)
		panic("unreachable")
	}
}

// send sends v on c, or fails the test with what did not happen.
func send[T any](t *testing.T, c chan<- T, v T, what string) {
	t.Helper()
	select {
	case c <- v:
	case <-time.After(wait):
		t.Fatalf("after %v: %s", wait, what)
	}
}

// blockUntil waits until n sleepers are armed on fake, or fails the test.
func blockUntil(t *testing.T, fake *clock.Fake, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := fake.BlockUntil(ctx, n); err != nil {
		t.Fatalf("after %v: %d sleepers never armed on the fake clock: %v", wait, n, err)
	}
}

// bounded returns a context that ends after wait, with a cause that says
// so: the context of a request whose exchange must not hang.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeoutCause(context.Background(), wait, fmt.Errorf("test: the exchange did not end within %v", wait))
	t.Cleanup(cancel)
	return ctx
}
