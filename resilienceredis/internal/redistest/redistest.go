// Package redistest runs real redis-server processes for the tests of
// resilienceredis, on loopback ports with a temporary directory each, no
// persistence, and bounded waits.
//
// A package's TestMain calls [Run]: the tests then use [Addr], the server
// named by the environment variable RESILIENCE_REDIS_ADDR or, when it is
// unset, one that Run starts and stops. Fault tests call [Start] for a
// private server that they may stall ([Server.Pause]), crash
// ([Server.Kill]) and restart ([Server.Restart]); cluster tests call
// [StartCluster] for a six-node Redis Cluster of their own.
//
// Without redis-server on the PATH the tests fail when CI=true, and are
// skipped otherwise with a message saying how to install it.
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EnvAddr is the environment variable naming a running server to test
// against ("127.0.0.1:6379"); when it is unset the tests start their own.
const EnvAddr = "RESILIENCE_REDIS_ADDR"

// Install says how to get a server.
const Install = "install it with `apt-get install -y redis-server` (Debian), or start one and set " +
	EnvAddr + "=host:port"

// startTimeout bounds the wait for a started server to answer PING.
const startTimeout = 10 * time.Second

var shared struct {
	addr string
}

// Run runs the package's tests (m.Run) against a server and returns the
// exit code: the server at RESILIENCE_REDIS_ADDR, or one it starts on a
// free loopback port and stops after the tests. Without redis-server, Run
// fails (code 1) when the environment variable CI is "true", and otherwise
// skips every test (code 0) with a message saying how to install it.
func Run(m *testing.M) int {
	if addr := os.Getenv(EnvAddr); addr != "" {
		shared.addr = addr
		return m.Run()
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			fmt.Fprintln(os.Stderr, "FAIL: redis-server is not installed (CI=true):", Install)
			return 1
		}
		fmt.Fprintln(os.Stderr, "SKIP: these tests need a real redis-server, which is not installed:", Install)
		return 0
	}
	dir, err := os.MkdirTemp("", "redistest")
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: redistest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	s, err := start(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: redistest:", err)
		return 1
	}
	defer s.Stop()
	shared.addr = s.Addr
	// Child processes (a test that re-executes its binary) and examples
	// find the server through the environment too.
	os.Setenv(EnvAddr, s.Addr)
	return m.Run()
}

// Addr returns the address of the package's server (see [Run]). It fails
// tb if Run did not run.
func Addr(tb testing.TB) string {
	tb.Helper()
	if shared.addr == "" {
		tb.Fatal("redistest: no server: call redistest.Run(m) from TestMain")
	}
	return shared.addr
}

// Server is a redis-server process that a test started, on 127.0.0.1.
type Server struct {
	Addr string // "127.0.0.1:port"

	port   int
	dir    string
	config []string
	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{} // closed when cmd has exited
}

// Start starts a private server for tb, stopped when tb ends. Its data
// directory is tb.TempDir(). config is more of the server's command-line
// configuration, as pairs ("--maxmemory", "10mb", "--maxmemory-policy",
// "allkeys-lru"), given after redistest's own (loopback, the port, no
// persistence). Without redis-server, Start fails tb when CI=true and
// skips it otherwise.
func Start(tb testing.TB, config ...string) *Server {
	tb.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatal("redistest: redis-server is not installed (CI=true): " + Install)
		}
		tb.Skip("redistest: this test needs a real redis-server, which is not installed: " + Install)
	}
	s, err := start(tb.TempDir(), config...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// StartProcess starts a server outside a test (a program such as
// examples/fleet), on a free loopback port, with dir as its data directory.
// Stop it with [Server.Stop].
func StartProcess(dir string) (*Server, error) { return start(dir) }

// Stop kills the server and waits for it to exit.
func (s *Server) Stop() { s.kill() }

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func start(dir string, config ...string) (*Server, error) {
	var last error
	for range 3 { // a port taken between freePort and the server's bind
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("redistest: %w", err)
		}
		s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), port: port, dir: dir, config: config}
		if last = s.launch(); last == nil {
			return s, nil
		}
	}
	return nil, last
}

// launch starts the process on s.port and waits for PING.
func (s *Server) launch() error {
	args := append([]string{
		"--bind", "127.0.0.1", "--port", strconv.Itoa(s.port), "--dir", s.dir,
		"--save", "", "--appendonly", "no", "--protected-mode", "yes",
	}, s.config...)
	cmd := exec.Command("redis-server", args...)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redistest: starting redis-server: %w", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("redistest: redis-server exited at start: %s", out)
		default:
		}
		if Ping(s.Addr, 200*time.Millisecond) == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond) // the server is starting: poll
	}
	s.kill()
	return fmt.Errorf("redistest: redis-server on %s did not answer PING within %v: %s", s.Addr, startTimeout, out)
}

// Ping sends PING to addr and waits at most timeout for +PONG.
func Ping(addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return errors.New("redistest: PING answered " + strconv.Quote(line))
	}
	return nil
}

func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return errors.New("redistest: server not running")
	}
	return s.cmd.Process.Signal(sig)
}

// Pause stops the server with SIGSTOP: connections stay open and nothing
// answers, as with a server stalled by a long command or a frozen VM.
func (s *Server) Pause(tb testing.TB) {
	tb.Helper()
	if err := s.signal(syscall.SIGSTOP); err != nil {
		tb.Fatal(err)
	}
}

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume(tb testing.TB) {
	tb.Helper()
	if err := s.signal(syscall.SIGCONT); err != nil {
		tb.Fatal(err)
	}
}

// Kill crashes the server (SIGKILL) and waits for it to exit. Its data is
// gone: it persists nothing.
func (s *Server) Kill(tb testing.TB) {
	tb.Helper()
	if !s.kill() {
		tb.Fatalf("redistest: redis-server on %s did not exit within %v of SIGKILL", s.Addr, startTimeout)
	}
}

func (s *Server) kill() bool {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return true
	}
	cmd.Process.Signal(syscall.SIGCONT) // a paused server would not die until continued
	cmd.Process.Kill()
	select {
	case <-done:
		return true
	case <-time.After(startTimeout):
		return false
	}
}

// Restart starts the server again, on the same port, after [Server.Kill].
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	if err := s.launch(); err != nil {
		tb.Fatal(err)
	}
}

// Eventually calls cond every few milliseconds until it returns true, for
// at most within, and fails tb with msg (and what cond last said) if it
// never did. It is for waits on real Redis round trips and pub/sub, whose
// time is the server's, not a fake clock's.
func Eventually(tb testing.TB, within time.Duration, msg string, cond func() (bool, string)) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		ok, why := cond()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			tb.Fatalf("%s: not within %v: %s", msg, within, why)
		case <-time.After(2 * time.Millisecond):
		}
	}
}
