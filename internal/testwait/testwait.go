// Package testwait bounds the waits of this module's tests: a wait for what
// should happen at once fails the test with a message naming what it waited
// for, instead of hanging until go test's limit. It is imported by tests
// only.
//
// In a testing/synctest bubble a wait on a channel or a timer that can
// never end is reported as a deadlock at once, but a goroutine stuck on a
// mutex or spinning in a loop is not durably blocked, so synctest would wait
// for it for ever: [Bubble] runs a bubble under a real-time watchdog.
package testwait

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// Patience bounds every wait but a bubble's: far beyond what a passing run
// takes, even under -race on a loaded machine.
const Patience = 30 * time.Second

// BubblePatience bounds a whole bubble ([Bubble], [Watchdog]).
const BubblePatience = time.Minute

// Recv returns the next value from ch, or fails t, naming what, if none
// comes within Patience. It must be called from the test's goroutine.
func Recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	return RecvFor(t, ch, Patience, what)
}

// RecvFor is [Recv] with a bound of d.
func RecvFor[T any](t testing.TB, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("waited %v for %s", d, what)
		panic("unreachable")
	}
}

// Send sends v on ch, or fails t, naming what, if nobody takes it within
// Patience.
func Send[T any](t testing.TB, ch chan<- T, v T, what string) {
	t.Helper()
	select {
	case ch <- v:
	case <-time.After(Patience):
		t.Fatalf("waited %v to send %s", Patience, what)
	}
}

// Returns runs f, which must not wait for long, and returns its result; it
// fails t, naming what, if f has not returned within Patience.
func Returns[V any](t testing.TB, what string, f func() V) V {
	t.Helper()
	done := make(chan V, 1)
	go func() { done <- f() }()
	return Recv(t, done, what)
}

// Wait waits for wg, or fails t, naming what, if it is not done within
// Patience.
func Wait(t testing.TB, wg *sync.WaitGroup, what string) {
	t.Helper()
	Returns(t, what, func() struct{} { wg.Wait(); return struct{}{} })
}

// Lock locks mu, or fails t if it is still held by someone else after
// Patience (a path that returned without unlocking it).
func Lock(t testing.TB, mu *sync.Mutex, what string) {
	t.Helper()
	Returns(t, what+" to be unlocked", func() struct{} { mu.Lock(); return struct{}{} })
}

// BlockUntil is f.BlockUntil(n) bounded by Patience: it fails t if n
// timers or sleepers are not armed on f by then.
func BlockUntil(t testing.TB, f *clock.Fake, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Patience)
	defer cancel()
	if err := f.BlockUntil(ctx, n); err != nil {
		t.Fatalf("waited %v for %d timers or sleepers on the fake clock (Waiters() = %d): %v", Patience, n, f.Waiters(), err)
	}
}

// Context returns a context that ends after Patience, with a cause that
// says so, cancelled when the test ends: for a call that must not hang.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeoutCause(context.Background(), Patience,
		fmt.Errorf("test: did not end within %v", Patience))
	t.Cleanup(cancel)
	return ctx
}

// Bubble runs f in a synctest bubble, as synctest.Test does, under
// [Watchdog].
func Bubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	defer Watchdog(t.Name())()
	synctest.Test(t, f)
}

// BubbleWithin runs f in a synctest bubble on a goroutine of its own and
// fails t, naming what, if the bubble has not returned within d of real
// time: for a bubble that the code under test could hold for ever without
// blocking durably (a scheduler that spins), with a bound far shorter than
// [BubblePatience], for failure only. The bubble goes on running after the
// failure; run the tests with -failfast to stop at it.
func BubbleWithin(t *testing.T, d time.Duration, what string, f func(t *testing.T)) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		synctest.Test(t, f)
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return after %v of wall-clock time", what, d)
	}
}

// Watchdog panics, naming test, if it is not stopped within
// BubblePatience. It must be started outside any bubble, so that it runs on
// real time.
func Watchdog(test string) (stop func()) {
	timer := time.AfterFunc(BubblePatience, func() {
		expire(fmt.Sprintf("%s: still running after %v: a call never returned "+
			"(a goroutine stuck on a lock or spinning is not durably blocked, so synctest cannot report it)", test, BubblePatience))
	})
	return func() { timer.Stop() }
}

// expire ends the test binary with a panic of msg: nothing else ends a
// call that never returns. A variable, so that this package's tests can
// see the panic without losing their process.
var expire = func(msg string) { panic(msg) }
