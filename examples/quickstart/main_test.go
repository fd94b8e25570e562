package main

import (
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The README shows this program from run on, and what it prints.
func TestREADMEShowsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	body := s[strings.Index(s, "func run("):]
	if !strings.Contains(string(readme), "```go\n"+body+"```\n") {
		t.Errorf("README.md's quick start is not main.go from %q on", "func run(")
	}
	if !strings.Contains(string(readme), "```\n"+want+"```\n") {
		t.Errorf("README.md does not show the quick start's output:\n%s", want)
	}
}

const want = `price 9.99, err <nil>; pricing called 3 times; breaker closed
price 9.99, err <nil>; pricing called 2 times; breaker open
price 9.99, err <nil>; pricing called 0 times; breaker open
`

// The program does what the README says it does. It runs in a synctest
// bubble, so the retry's backoff waits take no real time, under a
// real-time watchdog: a wait that can never end is a deadlock synctest
// reports at once, but a goroutine stuck on a lock is not, and the
// watchdog ends the run with a message instead.
func TestRun(t *testing.T) {
	watchdog := time.AfterFunc(time.Minute, func() {
		panic("TestRun: run still running after 1m0s: a call never returned")
	})
	defer watchdog.Stop()
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		start := time.Now()
		run(&out)
		// The retry's backoff waits of the first two calls are at most
		// 100ms and 200ms each; the third call, while the breaker is
		// open, fails fast instead of waiting out its 1s cooldown.
		if took := time.Since(start); took >= 600*time.Millisecond {
			t.Errorf("run took %v, want under 600ms: a call waited for the open breaker", took)
		}
		if diff := cmp.Diff(want, out.String()); diff != "" {
			t.Errorf("output mismatch (-want +got):\n%s", diff)
		}
	})
}
