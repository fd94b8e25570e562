package hedge_test

import (
	"fmt"
	"testing"
	"time"
)

// bound is how long a test waits for what should happen at once (a call's
// return once its attempts are done or cancelled), before it fails: a
// bound for failure only, never a measure of speed.
const bound = 2 * time.Second

// recvWithin returns the next value from ch, or fails, naming what, if
// none comes within bound. It fails with a panic, which ends the test
// binary: what never comes leaves a goroutine stuck for good, and the
// tests and examples after this one would hang on the same fault (go
// test's -failfast stops the tests after a failure, not the examples).
func recvWithin[V any](t *testing.T, ch <-chan V, what string) V {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(bound):
		panic(fmt.Sprintf("%s: waited %v for %s", t.Name(), bound, what))
	}
}
