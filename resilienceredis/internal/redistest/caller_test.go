package redistest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// envFail names the helper TestHelperFails makes fail in a child process.
const envFail = "REDISTEST_FAIL"

// failures make each helper fail, as a test that calls it would.
var failures = map[string]func(tb testing.TB){
	"Addr": func(tb testing.TB) {
		shared.addr = ""
		Addr(tb)
	},
	"Start": func(tb testing.TB) {
		os.Setenv("PATH", "")
		os.Setenv("CI", "true")
		Start(tb)
	},
	"StartCluster": func(tb testing.TB) {
		os.Setenv("PATH", "")
		os.Setenv("CI", "true")
		StartCluster(tb)
	},
	"Pause":  func(tb testing.TB) { (&Server{}).Pause(tb) },
	"Resume": func(tb testing.TB) { (&Server{}).Resume(tb) },
	"Restart": func(tb testing.TB) {
		// no such data directory: the server exits at start
		port, err := freePort()
		if err != nil {
			tb.Fatal(err)
		}
		s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), port: port, dir: filepath.Join(tb.TempDir(), "none")}
		tb.Cleanup(s.Stop)
		s.Restart(tb)
	},
	"Eventually": func(tb testing.TB) {
		Eventually(tb, 10*time.Millisecond, "never", func() (bool, string) { return false, "" })
	},
	"WaitOK": func(tb testing.TB) {
		(&Cluster{Nodes: []*Server{{Addr: Addr(tb), done: make(chan struct{})}}}).WaitOK(tb, 20*time.Millisecond)
	},
}

// Each helper that fails a test is a test helper: the failure names the
// line of the test that called it, not one of this package (checked on a
// child process's real test output), and it fails rather than returning.
func TestHelperFails(t *testing.T) {
	if name := os.Getenv(envFail); name != "" {
		failures[name](t)
		t.Log("returned")
		return
	}
	for name, fail := range failures {
		t.Run(name, func(t *testing.T) {
			saved := shared.addr
			t.Setenv("PATH", os.Getenv("PATH"))
			t.Setenv("CI", os.Getenv("CI"))
			_, failed := run(t, fail) // in this process too
			shared.addr = saved
			if len(failed) != 1 {
				t.Fatalf("in process: failed with %q, want one failure", failed)
			}

			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperFails$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), envFail+"="+name, EnvAddr+"="+saved)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			s := out.String()
			if err == nil || !strings.Contains(s, "caller_test.go:") || strings.Contains(s, "returned") {
				t.Errorf("child: %v, want a failure at a line of caller_test.go:\n%s", err, s)
			}
			for _, f := range []string{"redistest.go:", "cluster.go:"} {
				if strings.Contains(s, f) {
					t.Errorf("child: a failure at a line of %s, want caller_test.go:\n%s", f, s)
				}
			}
		})
	}
}
