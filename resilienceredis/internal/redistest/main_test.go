package redistest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// The package's tests run against the server Run starts (or the one at
// RESILIENCE_REDIS_ADDR), as a user's TestMain does; with redis-server
// installed, Run must have run them against a server, not skipped them.
func TestMain(m *testing.M) {
	code := Run(m)
	if _, err := exec.LookPath("redis-server"); err == nil && code == 0 && shared.addr == "" {
		fmt.Fprintln(os.Stderr, "FAIL: Run ran no server though redis-server is installed")
		code = 1
	}
	os.Exit(code)
}
