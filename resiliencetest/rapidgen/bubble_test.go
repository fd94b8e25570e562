package rapidgen

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// epoch is where every synctest bubble's clock starts.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// TestCheckInBubbleTimeIsVirtual checks that each run of the property is
// in a bubble of its own: its clock starts at the bubble's epoch, sleeps
// and context deadlines of hours end at once at exactly their time, and
// contexts derived from t.Context() work.
func TestCheckInBubbleTimeIsVirtual(t *testing.T) {
	var runs atomic.Int64
	var slept atomic.Int64
	CheckInBubble(t, func(t *rapid.T) {
		runs.Add(1)
		if now := time.Now(); !now.Equal(epoch) {
			t.Fatalf("the run starts at %v, want a bubble's epoch %v", now, epoch)
		}
		d := Duration(0, 24*time.Hour).Draw(t, "sleep")
		time.Sleep(d)
		slept.Add(int64(d))
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		<-ctx.Done()
		if got := time.Since(epoch); got != d+time.Hour {
			t.Fatalf("after sleeping %v and a deadline of 1h: %v of bubble time, want %v", d, got, d+time.Hour)
		}
	})
	if runs.Load() == 0 {
		t.Fatal("the property never ran")
	}
	if slept := time.Duration(slept.Load()); slept < time.Hour {
		t.Errorf("%d runs slept %v of bubble time in all, want hours", runs.Load(), slept)
	}
}

// failing are properties that fail, which TestCheckInBubbleFailures runs in
// a child process, by name.
var failing = map[string]func(*rapid.T){
	// Fails from n = 17 on, each run after sleeping n hours.
	"fatal": func(t *rapid.T) {
		n := rapid.IntRange(0, 1000).Draw(t, "n")
		time.Sleep(time.Duration(n) * time.Hour)
		if n >= 17 {
			t.Fatalf("n = %d, after %v", n, time.Since(epoch))
		}
	},
	// Panics from n = 17 on.
	"panic": func(t *rapid.T) {
		if n := rapid.IntRange(0, 1000).Draw(t, "n"); n >= 17 {
			panic("boom")
		}
	},
	// Leaves a goroutine blocked for ever from n = 17 on.
	"leak": func(t *rapid.T) {
		if n := rapid.IntRange(0, 1000).Draw(t, "n"); n >= 17 {
			go func() { select {} }()
		}
	},
	// Draws a random source (Rand is a helper: its draw is logged at this
	// line) and fails.
	"rand": func(t *rapid.T) {
		_ = Rand(t, "seed")
		t.Fatal("drew a source")
	},
	// Fails in one place from n = 100 on, and in another for smaller n
	// when x is 0; rapid finds the first with the seed of
	// TestCheckInBubbleFailures, and must not shrink it into the second.
	"two sites": func(t *rapid.T) {
		n := rapid.IntRange(0, 1000).Draw(t, "n")
		x := rapid.IntRange(0, 1000).Draw(t, "x")
		if n >= 100 {
			t.Fatalf("big: n = %d", n)
		}
		if n >= 5 && x == 0 {
			t.Fatalf("small: n = %d", n)
		}
	},
}

// TestFailingProperty runs one of failing, named by the environment
// variable RAPIDGEN_FAILING, in the child process of
// TestCheckInBubbleFailures; otherwise it does nothing.
func TestFailingProperty(t *testing.T) {
	name := os.Getenv("RAPIDGEN_FAILING")
	if name == "" {
		t.Skip("runs in the child process of TestCheckInBubbleFailures")
	}
	CheckInBubble(t, failing[name])
}

// runFailing runs TestFailingProperty in a child process and returns its
// output; the child must fail, within 2 minutes.
func runFailing(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args = append([]string{"-test.run=^TestFailingProperty$", "-test.count=1", "-rapid.nofailfile"}, args...)
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "RAPIDGEN_FAILING="+name)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s: the child process still running after 2m0s:\n%s", name, out)
	}
	if _, failed := err.(*exec.ExitError); !failed {
		t.Fatalf("%s: the child process did not fail (%v):\n%s", name, err, out)
	}
	return string(out)
}

// TestCheckInBubbleFailures checks that failing properties are reported,
// shrunk to their smallest case and replayed by seed as under rapid.Check.
func TestCheckInBubbleFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"fatal", nil, []string{"[rapid] failed after", "n = 17, after 17h0m0s", "draw n: 17\n"}},
		{"panic", nil, []string{"[rapid] panic after", "boom\n", "in the synctest bubble, at", "bubble_test.go:", "draw n: 17\n"}},
		{"leak", nil, []string{"deadlock: main bubble goroutine has exited but blocked goroutines remain", "draw n: 17\n"}},
		{"two sites", []string{"-rapid.seed=1"}, []string{"big: n = 100\n", "draw x: 0\n"}},
		{"rand", nil, []string{"drew a source", "draw seed: 0x0\n"}},
	} {
		out := runFailing(t, c.name, c.args...)
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the output has no %q:\n%s", c.name, w, out)
			}
		}
		if strings.Contains(out, "policy.go:") {
			t.Errorf("%s: a line of the output is attributed to rapidgen's policy.go, not to the property:\n%s", c.name, out)
		}
		if c.name != "fatal" {
			continue
		}
		// CheckInBubble is a helper: the failure is reported at its caller.
		if !regexp.MustCompile(`\sbubble_test\.go:\d+: \[rapid\] failed after`).MatchString(out) {
			t.Errorf("the failure is not reported at the line calling CheckInBubble:\n%s", out)
		}
		// The seed it reports replays the failure.
		seed := regexp.MustCompile(`-rapid\.seed=\d+`).FindString(out)
		if seed == "" {
			t.Fatalf("no seed in the output:\n%s", out)
		}
		if again := runFailing(t, c.name, seed); !strings.Contains(again, "n = 17, after 17h0m0s") {
			t.Errorf("%s does not replay the failure:\n%s", seed, again)
		}
	}
}
