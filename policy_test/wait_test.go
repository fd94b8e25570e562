package policytest

import (
	"sync"
	"testing"

	"github.com/f0b5b96b/resilience/internal/testwait"
)

// The stress tests' waits are bounded by internal/testwait.

func waitWithin(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	testwait.Wait(t, wg, what)
}
