package resilienceredis

import (
	"fmt"
	"os"
	"testing"

	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"go.uber.org/goleak"
)

// TestMain runs the tests against a real redis-server (see redistest.Run)
// and then checks that they left no goroutine running.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	code := redistest.Run(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: goroutines left running:", err)
			code = 1
		}
	}
	os.Exit(code)
}
