package resilienceredis

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// TestMain runs the tests against a real redis-server (see redistest.Run)
// and then checks that they left no goroutine running.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	// The fault tests make the client log every failed dial: keep the
	// output for the tests' own messages.
	redis.SetLogger(quiet{})
	code := redistest.Run(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: goroutines left running:", err)
			code = 1
		}
	}
	os.Exit(code)
}
