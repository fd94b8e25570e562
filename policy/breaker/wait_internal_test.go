package breaker

import (
	"sync"
	"testing"

	"github.com/f0b5b96b/resilience/internal/testwait"
)

// The waits of the internal tests are bounded by internal/testwait.

func lockWithin(t *testing.T, mu *sync.Mutex, what string) { t.Helper(); testwait.Lock(t, mu, what) }

func waitWithin(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	testwait.Wait(t, wg, what)
}
