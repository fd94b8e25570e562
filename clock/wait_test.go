package clock_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
)

// The waits of this package's tests are bounded: they fail with a message
// naming what they waited for instead of hanging.

// patience bounds each wait for what follows at once from the test's own
// step (a Sleep returning once an Advance passed its deadline, a timer
// armed, a callback's panic). It is a bound for failure only, never a
// measure of speed: those steps take microseconds. It is far below
// testwait.Patience so that a Fake that never arms or never fires a timer
// fails the test within seconds rather than hanging it past a mutation
// run's timeout.
const patience = 2 * time.Second

func recvWithin[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	return testwait.RecvFor(t, ch, patience, what)
}

func recvWithinFor[T any](t testing.TB, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	return testwait.RecvFor(t, ch, d, what)
}

func waitWithin(t testing.TB, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	recvWithin(t, done, what)
}

// blockUntilWithin is f.BlockUntil(n) bounded by patience.
func blockUntilWithin(t testing.TB, f *clock.Fake, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := f.BlockUntil(ctx, n); err != nil {
		t.Fatalf("waited %v for %d timers or sleepers on the fake clock (Waiters() = %d): %v", patience, n, f.Waiters(), err)
	}
}

func bubble(t *testing.T, f func(t *testing.T)) { t.Helper(); testwait.Bubble(t, f) }
