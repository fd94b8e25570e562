package policytest

import (
	"sync"
	"testing"
	"time"
)

// patience bounds the waits of the stress tests: goroutines that should
// all be done and are not after this long never will be (a deadlock), and
// the test fails with a message instead of hanging until go test's limit.
const patience = 30 * time.Second

// waitWithin waits for wg, or fails t if it is not done within patience.
func waitWithin(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(patience):
		t.Fatalf("%s not done within %v: a deadlock?", what, patience)
	}
}
