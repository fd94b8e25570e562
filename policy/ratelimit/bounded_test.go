package ratelimit_test

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Every test here that waits bounds its wait and fails with a message: a
// wait in a synctest bubble is reported as a deadlock at once (or, on the
// bubble's clock, ends); a call that must return at once, outside a
// bubble, runs under a real-time guard; and a bubble runs under a watchdog,
// since a goroutine spinning in a loop or stuck on a lock is not durably
// blocked, so synctest would wait for it for ever.

// patience bounds any single wait of a test, in real time: far beyond what
// a passing run takes, even under -race on a loaded machine.
const patience = time.Minute

// bubble runs f in a synctest bubble, as synctest.Test does, under a
// watchdog: if f has not returned within patience, the test binary ends with
// a panic naming the test.
func bubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	defer watchdog(t.Name())()
	synctest.Test(t, f)
}

// watchdog panics, naming the test, if it is not stopped within patience.
// It must be started outside any bubble, so that it runs on real time.
func watchdog(test string) (stop func()) {
	timer := time.AfterFunc(patience, func() {
		panic(fmt.Sprintf("%s: still running after %v: a call never returned "+
			"(a goroutine spinning or stuck on a lock is not durably blocked, so synctest cannot report it)", test, patience))
	})
	return func() { timer.Stop() }
}

// returns runs f, which must not wait, and returns its result; it fails t
// with what if f has not returned within patience.
func returns[V any](t *testing.T, what string, f func() V) V {
	t.Helper()
	done := make(chan V, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(patience):
		t.Fatalf("%s: still waiting after %v", what, patience)
		panic("unreachable")
	}
}

// waitAll waits for wg, and fails t with what if it has not finished within
// patience.
func waitAll(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	returns(t, what, func() struct{} { wg.Wait(); return struct{}{} })
}
