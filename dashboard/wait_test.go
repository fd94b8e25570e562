package dashboard

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
)

// patience bounds the waits of this package's tests: a test fails with a
// message naming what did not happen instead of hanging. The bound is for
// failure only, never an assertion of speed: what the tests wait for
// takes microseconds (an event over the loopback network, a handler that
// returns), and a bound well under the mutation harness's timeout makes a
// change that leaves them waiting fail as a test failure, not a hang.
const patience = 2 * time.Second

func recv[T any](t testing.TB, c <-chan T, what string) T {
	t.Helper()
	return testwait.RecvFor(t, c, patience, what)
}

func returns[V any](t testing.TB, what string, f func() V) V {
	t.Helper()
	done := make(chan V, 1)
	go func() { done <- f() }()
	return recv(t, done, what)
}

func waitGroup(t testing.TB, wg *sync.WaitGroup, what string) {
	t.Helper()
	returns(t, what, func() struct{} { wg.Wait(); return struct{}{} })
}

func blockUntil(t testing.TB, f *clock.Fake, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := f.BlockUntil(ctx, n); err != nil {
		t.Fatalf("waited %v for %d timers or sleepers on the fake clock (Waiters() = %d): %v", patience, n, f.Waiters(), err)
	}
}

// within returns f(), or fails t if f has not returned within patience:
// for the calls of the encoder's loops, which a change can leave
// spinning.
func within[V any](t interface{ Fatalf(string, ...any) }, what string, f func() V) V {
	done := make(chan V, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(patience):
		t.Fatalf("waited %v for %s", patience, what)
		panic("unreachable")
	}
}
