package redistest

import (
	"os"
	"testing"
)

// The package's tests run against the server Run starts (or the one at
// RESILIENCE_REDIS_ADDR), as a user's TestMain does.
func TestMain(m *testing.M) { os.Exit(Run(m)) }
