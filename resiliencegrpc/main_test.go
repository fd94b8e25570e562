package resiliencegrpc_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves a goroutine behind: a stream's
// establishing goroutine, an attempt, a connection.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
