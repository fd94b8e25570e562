package breaker

import (
	"sync"
	"testing"
	"time"
)

// patience bounds every wait of the internal tests: what should happen at
// once and has not after this long never will, and the test fails with a
// message instead of hanging until go test's limit.
const patience = 10 * time.Second

// lockWithin locks mu, or fails t if it is still held by someone else
// after patience (a path that returned without unlocking it).
func lockWithin(t *testing.T, mu *sync.Mutex, what string) {
	t.Helper()
	locked := make(chan struct{})
	go func() { mu.Lock(); close(locked) }()
	select {
	case <-locked:
	case <-time.After(patience):
		t.Fatalf("%s still locked after %v", what, patience)
	}
}

// waitWithin waits for wg, or fails t if it is not done within patience.
func waitWithin(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(patience):
		t.Fatalf("%s not done within %v", what, patience)
	}
}
