package testwait_test

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
)

// helperTB records the functions that call its Helper, and records
// Fatalf as fatalTB does.
type helperTB struct {
	fatalTB
	helpers map[string]bool
}

func (h helperTB) Helper() {
	pc, _, _, _ := runtime.Caller(1)
	name := runtime.FuncForPC(pc).Name()
	name = name[strings.LastIndex(name, "/")+1:]
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i] // a generic function: testwait.Recv[...]
	}
	h.helpers[name] = true
}

// fails runs f in a goroutine of its own, as a test's helper would fail
// it, and returns the message of its Fatalf, "" if none.
func fails(f func(tb testing.TB)) (msg string) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = recover() }()
		f(fatalTB{nil, &msg})
	}()
	<-done
	return msg
}

// Each wait fails, naming what it waited for, once its bound passes (on
// the bubble's fake time).
func TestWaitsFailWithAMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		if msg := fails(func(tb testing.TB) { testwait.Send(tb, make(chan int), 1, "a value nobody takes") }); msg != "waited 30s to send a value nobody takes" {
			t.Errorf("Send failed with %q", msg)
		}
		if msg := fails(func(tb testing.TB) { testwait.Recv(tb, make(chan int), "a value that never comes") }); msg != "waited 30s for a value that never comes" {
			t.Errorf("Recv failed with %q", msg)
		}
		f := clock.NewFake()
		if msg := fails(func(tb testing.TB) { testwait.BlockUntil(tb, f, 1) }); !strings.HasPrefix(msg, "waited 30s for 1 timers or sleepers on the fake clock (Waiters() = 0): ") {
			t.Errorf("BlockUntil failed with %q", msg)
		}
	})
}

// Returns leaves no goroutine behind when f returns after the wait failed.
func TestReturnsLeavesNothingBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		msg := fails(func(tb testing.TB) {
			testwait.Returns(tb, "a slow call", func() int { <-release; return 1 })
		})
		if msg != "waited 30s for a slow call" {
			t.Errorf("Returns failed with %q", msg)
		}
		close(release)
		synctest.Wait() // the goroutine of f must be able to end
	})
}

// Wait returns once the group is done, not before; Lock returns with the
// mutex held (a goroutine waiting on a mutex is not durably blocked, so
// the bubble cannot test Lock waiting).
func TestWaitAndLockWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var wg sync.WaitGroup
		done := false
		wg.Go(func() {
			time.Sleep(time.Second)
			done = true
		})
		testwait.Wait(t, &wg, "the goroutine")
		if !done {
			t.Fatal("Wait returned before the group was done")
		}
		var mu sync.Mutex
		testwait.Lock(t, &mu, "mu")
		if mu.TryLock() {
			t.Fatal("Lock returned without the mutex held")
		}
		mu.Unlock()
	})
}

// Context ends when the test ends.
func TestContextEndsWithTheTest(t *testing.T) {
	var ctx context.Context
	t.Run("sub", func(t *testing.T) { ctx = testwait.Context(t) })
	if ctx.Err() == nil {
		t.Fatal("the Context of a test that ended is not done")
	}
}

// Each helper marks itself a helper, so that a failure names the line of
// its caller, not a line of the helper.
func TestHelpersAreHelpers(t *testing.T) {
	tb := helperTB{fatalTB{t, new(string)}, map[string]bool{}}
	ch := make(chan int, 1)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"Recv", func() { ch <- 1; testwait.Recv(tb, ch, "") }},
		{"RecvFor", func() { ch <- 1; testwait.RecvFor(tb, ch, time.Hour, "") }},
		{"Send", func() { testwait.Send(tb, ch, 1, ""); <-ch }},
		{"Returns", func() { testwait.Returns(tb, "", func() int { return 1 }) }},
		{"Wait", func() { testwait.Wait(tb, &wg, "") }},
		{"Lock", func() { testwait.Lock(tb, &mu, ""); mu.Unlock() }},
		{"BlockUntil", func() { testwait.BlockUntil(tb, clock.NewFake(), 0) }},
	} {
		clear(tb.helpers)
		tc.f()
		if !tb.helpers["testwait."+tc.name] {
			t.Errorf("%s did not call Helper (the helpers were %v)", tc.name, tb.helpers)
		}
	}
}

const watchdogEnv = "TESTWAIT_WATCHDOG_CHILD"

// The watchdog panics, naming the test, once BubblePatience passes, and
// not once stopped. Its panic ends the process, so each case runs in a
// child process, on a bubble's fake time.
func TestWatchdog(t *testing.T) {
	if mode := os.Getenv(watchdogEnv); mode != "" {
		synctest.Test(t, func(*testing.T) {
			stop := testwait.Watchdog("TestChild")
			if mode == "stopped" {
				stop()
			}
			time.Sleep(testwait.BubblePatience + time.Second)
		})
		return
	}
	for _, tc := range []struct {
		mode      string
		wantPanic bool
	}{{"running", true}, {"stopped", false}} {
		t.Run(tc.mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestWatchdog$", "-test.count=1")
			cmd.Env = append(os.Environ(), watchdogEnv+"="+tc.mode)
			out, err := cmd.CombinedOutput()
			panicked := strings.Contains(string(out), "panic: TestChild: still running after 1m0s: a call never returned")
			if panicked != tc.wantPanic || (err != nil) != tc.wantPanic {
				t.Fatalf("child (%s) exited with %v, panicked %v, want %v:\n%s", tc.mode, err, panicked, tc.wantPanic, out)
			}
		})
	}
}

const bubbleWithinEnv = "TESTWAIT_BUBBLEWITHIN_CHILD"

// BubbleWithin runs its bubble and returns once the bubble does; it fails
// the test, naming what it ran, when the bubble has not returned within
// its bound. A bubble that waits for a mutex held outside it is not
// durably blocked and does not return: the failing case runs in a child
// process, which ends with its failure.
func TestBubbleWithin(t *testing.T) {
	if mode := os.Getenv(bubbleWithinEnv); mode != "" {
		var mu sync.Mutex
		if mode == "held" {
			mu.Lock()
			time.AfterFunc(10*time.Second, mu.Unlock) // long after the bound: the child fails first, whatever its load
		}
		testwait.BubbleWithin(t, 50*time.Millisecond, "the child's bubble", func(*testing.T) {
			mu.Lock()
			defer mu.Unlock()
		})
		return
	}
	ran := false
	testwait.BubbleWithin(t, testwait.Patience, "a bubble", func(*testing.T) { ran = true })
	if !ran {
		t.Error("BubbleWithin did not run f")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBubbleWithin$", "-test.count=1")
	cmd.Env = append(os.Environ(), bubbleWithinEnv+"=held")
	out, err := cmd.CombinedOutput()
	// The message names the line of BubbleWithin's caller, as a helper's does.
	want := regexp.MustCompile(`failures_test\.go:\d+: the child's bubble did not return after 50ms of wall-clock time`)
	if failed := want.Match(out); !failed || err == nil {
		t.Fatalf("child exited with %v, failed with the message at its caller's line %v; want an error and the message:\n%s", err, failed, out)
	}
}
