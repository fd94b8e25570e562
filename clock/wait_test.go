package clock_test

import (
	"sync"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
)

// The waits of this package's tests are bounded by internal/testwait: they
// fail with a message naming what they waited for instead of hanging.

const patience = testwait.Patience

func recvWithin[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	return testwait.Recv(t, ch, what)
}

func recvWithinFor[T any](t testing.TB, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	return testwait.RecvFor(t, ch, d, what)
}

func waitWithin(t testing.TB, wg *sync.WaitGroup, what string) {
	t.Helper()
	testwait.Wait(t, wg, what)
}

func blockUntilWithin(t testing.TB, f *clock.Fake, n int) { t.Helper(); testwait.BlockUntil(t, f, n) }

func bubble(t *testing.T, f func(t *testing.T)) { t.Helper(); testwait.Bubble(t, f) }
