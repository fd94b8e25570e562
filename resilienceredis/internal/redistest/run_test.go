package redistest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// envChild makes the test binary, re-executed by TestRun..., print what
// its TestMain's Run gave it.
const envChild = "REDISTEST_CHILD"

// TestChild is the child of TestRunStartsAndStops and
// TestRunUsesEnvAddr: it prints the package's server address, its
// environment variable and data directory.
func TestChild(t *testing.T) {
	if os.Getenv(envChild) == "" {
		t.Skip("run by TestRunStartsAndStops")
	}
	dir, err := (&Cluster{}).Do(Addr(t), "CONFIG", "GET", "dir")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := dir.([]any)
	if len(d) != 2 {
		t.Fatalf("CONFIG GET dir answered %v", dir)
	}
	os.Stdout.WriteString("addr=" + Addr(t) + "\nenv=" + os.Getenv(EnvAddr) + "\ndir=" + d[1].(string) + "\n")
}

// child runs TestChild in a new process with env added, and returns what
// it printed.
func child(t *testing.T, env ...string) map[string]string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), append(env, envChild+"=1")...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v: %s", err, out.Bytes())
	}
	got := map[string]string{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			got[k] = v
		}
	}
	return got
}

// Without RESILIENCE_REDIS_ADDR, Run starts a server on a loopback port
// in a temporary directory, sets the variable to its address for the
// tests (and their child processes), and stops it and removes the
// directory after them.
func TestRunStartsAndStops(t *testing.T) {
	got := child(t, EnvAddr+"=")
	if !strings.HasPrefix(got["addr"], "127.0.0.1:") || got["env"] != got["addr"] || got["dir"] == "" {
		t.Fatalf("the child's server: %q, want a loopback address in %s too, and a directory", got, EnvAddr)
	}
	if err := Ping(got["addr"], time.Second); err == nil {
		t.Errorf("the child's server at %s still answers after the child", got["addr"])
	}
	if _, err := os.Stat(got["dir"]); !os.IsNotExist(err) {
		t.Errorf("the child's server directory %s: %v, want it removed", got["dir"], err)
	}
}

// With RESILIENCE_REDIS_ADDR, Run uses that server and starts none.
func TestRunUsesEnvAddr(t *testing.T) {
	addr := Addr(t)
	got := child(t, EnvAddr+"="+addr)
	if got["addr"] != addr {
		t.Errorf("the child's server %q, want %s from %s", got["addr"], addr, EnvAddr)
	}
	if err := Ping(addr, time.Second); err != nil {
		t.Errorf("the server at %s after the child: %v, want it still running", addr, err)
	}
}

// Addr fails a test whose package did not call Run.
func TestAddrWithoutRun(t *testing.T) {
	saved := shared.addr
	shared.addr = ""
	defer func() { shared.addr = saved }()
	_, failed := run(t, func(tb testing.TB) { Addr(tb) })
	if want := "redistest: no server: call redistest.Run(m) from TestMain"; len(failed) != 1 || failed[0] != want {
		t.Errorf("failed with %q, want [%q]", failed, want)
	}
}
