package breaker

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/internal/testwait"
)

// The waits of the internal tests are bounded by internal/testwait.

func lockWithin(t *testing.T, mu *sync.Mutex, what string) { t.Helper(); testwait.Lock(t, mu, what) }

func waitWithin(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	testwait.Wait(t, wg, what)
}

// bound is how long a test waits for a call that should return at once,
// before it fails: a bound for failure only, never a measure of speed. A
// call that keeps the breaker's lock, waits for it while holding it, or
// spins then fails its test instead of hanging it.
const bound = 2 * time.Second

// within runs f, which should return at once, and returns its result; it
// fails, naming what, if f has not returned within bound.
func within[V any](t *testing.T, what string, f func() V) V {
	t.Helper()
	done := make(chan V, 1)
	go func() { done <- f() }()
	return recvWithin(t, done, what+" to return")
}

// recvWithin returns the next value from ch, or fails, naming what, if
// none comes within bound. It fails with a panic, which ends the test
// binary: a call that never returns leaves a goroutine stuck (on the
// breaker's lock, or spinning) for good, and the tests and examples after
// this one would hang on the same fault (go test's -failfast stops the
// tests after a failure, not the examples).
func recvWithin[V any](t *testing.T, ch <-chan V, what string) V {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(bound):
		panic(fmt.Sprintf("%s: waited %v for %s", t.Name(), bound, what))
	}
}

// do is within for a call with no result.
func do(t *testing.T, what string, f func()) {
	t.Helper()
	within(t, what, func() struct{} { f(); return struct{}{} })
}
