package redistest

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// envOrphan makes TestProcessDies's child start a server and exit
// without stopping it.
const envOrphan = "REDISTEST_ORPHAN"

// A server started with StartProcess dies with the process that started
// it, even when that process exits without stopping it (on Linux).
func TestProcessDies(t *testing.T) {
	if os.Getenv(envOrphan) != "" {
		runtime.LockOSThread() // the server dies with the thread that started it
		s, err := StartProcess(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("addr=" + s.Addr + "\n")
		os.Exit(0) // no Stop
	}
	if runtime.GOOS != "linux" {
		t.Skip("only on Linux does the server die with its parent")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestProcessDies$", "-test.count=1")
	cmd.Env = append(os.Environ(), envOrphan+"=1", EnvAddr+"="+Addr(t))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v: %s", err, out.Bytes())
	}
	_, addr, ok := strings.Cut(strings.TrimSpace(out.String()), "addr=")
	if !ok {
		t.Fatalf("child printed %q, want its server's address", out.Bytes())
	}
	for deadline := time.Now().Add(5 * time.Second); Ping(addr, 100*time.Millisecond) == nil; {
		if time.Now().After(deadline) {
			(&Cluster{}).Do(addr, "SHUTDOWN", "NOSAVE") // leave nothing behind
			t.Fatalf("the orphaned server at %s still answers PING 5s after its parent exited", addr)
		}
		time.Sleep(20 * time.Millisecond) // a real process exiting: poll
	}
}
