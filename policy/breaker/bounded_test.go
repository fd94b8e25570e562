package breaker_test

import (
	"sync"
	"testing"

	"github.com/f0b5b96b/resilience/internal/testwait"
)

// bubble runs f in a synctest bubble under a real-time watchdog
// (testwait.Bubble): a goroutine stuck on the breaker's lock is not durably
// blocked, so synctest alone would wait for it for ever.
func bubble(t *testing.T, f func(t *testing.T)) { t.Helper(); testwait.Bubble(t, f) }

// waitWithin waits for wg under a real-time guard (testwait.Wait).
func waitWithin(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	testwait.Wait(t, wg, what)
}
