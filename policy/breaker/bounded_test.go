package breaker_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// bubble runs f in a synctest bubble, as synctest.Test does, under a
// real-time watchdog. In a bubble a wait on a channel or a timer that can
// never end is reported as a deadlock at once, but a goroutine stuck on a
// mutex (a path that returned without unlocking the breaker) is not
// durably blocked, so synctest would wait for it for ever: if f has not
// returned within a minute, the test binary ends with a panic naming the
// test.
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
