package clock_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// patience bounds every wait in this package's tests: something that
// should happen at once and has not happened after this long never will,
// and the test fails with a message instead of hanging until go test's
// limit.
const patience = 10 * time.Second

// recvWithin returns the value received from ch, or fails t with a message
// naming what it waited for if none arrives within patience. It must be
// called from the test's goroutine.
func recvWithin[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	return recvWithinFor(t, ch, patience, what)
}

// recvWithinFor is recvWithin with a bound of d, for a wait on work that
// takes seconds of its own (under -race, say).
func recvWithinFor[T any](t testing.TB, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("waited %v for %s", d, what)
		panic("unreachable")
	}
}

// waitWithin waits for wg, or fails t if it is not done within patience.
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
		t.Fatalf("BlockUntil(%d) did not return within %v (Waiters() = %d): %v", n, patience, f.Waiters(), err)
	}
}

// bubble runs f in a synctest bubble, as synctest.Test does, under a
// real-time watchdog. In a bubble a wait on a channel or a timer that can
// never end is reported as a deadlock at once, but a goroutine stuck on a
// mutex (the Fake's, left locked) is not durably blocked, so synctest would
// wait for it for ever: if f has not returned within a minute, the test
// binary ends with a panic naming the test.
func bubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	const patience = time.Minute
	watchdog := time.AfterFunc(patience, func() {
		panic(fmt.Sprintf("%s: still running after %v: a call never returned "+
			"(a goroutine stuck on a lock is not durably blocked, so synctest cannot report it)", t.Name(), patience))
	})
	defer watchdog.Stop()
	synctest.Test(t, f)
}
