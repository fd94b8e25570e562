package resilienceredis

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

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
		// A closed client's dial probe (go-redis's tryDial, after a node
		// was killed) sleeps 1s before it sees the close and ends: look
		// again for a few seconds before calling a goroutine leaked.
		err := goleak.Find()
		for i := 0; err != nil && i < 4; i++ {
			time.Sleep(time.Second)
			err = goleak.Find()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: goroutines left running:", err)
			code = 1
		}
	}
	os.Exit(code)
}
