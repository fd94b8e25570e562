package resilienceredis

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/google/go-cmp/cmp"
)

// A flush sends the counts not yet sent, executions alone or retries
// alone as well as both; one with nothing to send reads the fleet's
// totals only every ProbeInterval: within it, no round trip (the
// snapshot's flushes stays).
func TestRetryBudgetIdleFlush(t *testing.T) {
	rdb := newClient(t)
	b := newRetryBudget(rdb, "idle", []RetryBudgetOption{WithPrefix(testPrefix(t)), WithTimeout(5 * time.Second), WithProbeInterval(time.Hour)})
	type state struct{ Flushes, Executions, Retries int64 }
	check := func(step string, want state) {
		t.Helper()
		b.flush(false)
		c, r := fleetTotals(t, rdb, b)
		got := state{int64(values(t, b.Snapshot())["flushes"]), c, r}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("after %s: flushes and Redis's counts mismatch (-want +got):\n%s", step, diff)
		}
	}
	b.Deposit()
	check("a flush of one execution", state{1, 1, 0})
	check("a flush with nothing to send", state{1, 1, 0})
	b.Deposit()
	check("another execution", state{2, 2, 0})
	if !b.Withdraw() {
		t.Fatal("the floor refused a retry")
	}
	check("a retry alone", state{3, 2, 1})
	b.Deposit()
	b.Deposit()
	b.Withdraw()
	check("two executions and a retry", state{4, 4, 2})
	check("nothing to send again", state{4, 4, 2})
}

// A fresh instance reads the fleet's totals at its first flush, even with
// nothing to send and whatever its ProbeInterval (here the longest there
// is): it has not read them yet.
func TestRetryBudgetFirstFlushReads(t *testing.T) {
	b := newRetryBudget(newClient(t), "firstread", []RetryBudgetOption{WithPrefix(testPrefix(t)), WithTimeout(5 * time.Second), WithProbeInterval(math.MaxInt64)})
	b.flush(false)
	if n := values(t, b.Snapshot())["flushes"]; n != 1 {
		t.Errorf("flushes = %v after a fresh instance's first flush, want 1", n)
	}
}

// The flusher sends counts every FlushInterval but, with nothing to send,
// does not ask Redis at each tick: only every ProbeInterval.
func TestRetryBudgetIdleFlusher(t *testing.T) {
	rdb := newClient(t)
	b := NewRetryBudget(rdb, "idleloop", WithPrefix(testPrefix(t)), WithTimeout(5*time.Second), WithFlushInterval(5*time.Millisecond), WithProbeInterval(time.Hour))
	defer b.Close()
	counted := func(n int64) {
		t.Helper()
		redistest.Eventually(t, 5*time.Second, "the executions flushed", func() (bool, string) {
			c, _ := fleetTotals(t, rdb, b)
			return c == n, fmt.Sprintf("Redis counts %d executions, want %d", c, n)
		})
	}
	b.Deposit()
	counted(1)
	before := values(t, b.Snapshot())["flushes"]
	time.Sleep(100 * time.Millisecond) // 20 ticks with nothing to send
	b.Deposit()
	counted(2)
	if after := values(t, b.Snapshot())["flushes"]; after != before+1 {
		t.Errorf("flushes went from %v to %v over idle ticks and one execution, want one flush (%v)", before, after, before+1)
	}
}
