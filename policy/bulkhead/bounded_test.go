package bulkhead_test

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Every test here that waits bounds its wait and fails with a message: a
// wait on a channel in a synctest bubble is reported as a deadlock at once;
// a wait outside a bubble selects on a real-time guard; and a bubble runs
// under a watchdog, since a goroutine stuck on a mutex or spinning in a
// loop is not durably blocked, so synctest.Wait would wait for it for ever.

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
			"(a goroutine stuck on a lock or spinning is not durably blocked, so synctest cannot report it)", test, patience))
	})
	return func() { timer.Stop() }
}

// waitAll waits for wg, and fails t with what if it has not finished within
// patience.
func waitAll(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(patience):
		t.Fatalf("%s: not finished after %v", what, patience)
	}
}
