package resilienceredis

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/eventlog"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
)

// errGone is the error of the round trips failed on purpose.
var errGone = errors.New("test: Redis gone")

// failing makes rdb's script round trips fail with errGone while the
// returned switch is on.
func failing(rdb *redis.Client) *atomic.Bool {
	var down atomic.Bool
	rdb.AddHook(evalHook(func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if down.Load() {
			return errGone
		}
		return next(ctx, cmd)
	}))
	return &down
}

// The local budget that decides when a flush fails counted the retries
// the fleet's counts granted before: it grants only what is left of its
// Ratio. Each local decision is a RetryBudgetLocal event whose Err is the
// failed flush's error, as the snapshot's Reason; retries_granted counts
// the retries granted either way. When Redis answers again the fleet's
// counts decide.
func TestRetryBudgetFallbackKnowsSharedRetries(t *testing.T) {
	rdb := newClient(t)
	down := failing(rdb)
	var rec eventlog.Recorder
	b := newRetryBudget(rdb, "fallbackcounts", []RetryBudgetOption{WithPrefix(testPrefix(t)), WithTimeout(5 * time.Second),
		WithRatio(0.5), WithMinPerSecond(resilience.Off), WithProbeInterval(time.Nanosecond), WithObserver(&rec)})
	for range 10 {
		b.Deposit()
	}
	asks := func(n int) int {
		got := 0
		for range n {
			if b.Withdraw() {
				got++
			}
		}
		return got
	}
	if got := asks(5); got != 5 {
		t.Fatalf("the fleet's counts granted %d of 5 retries for 10 executions at Ratio 0.5, want 5", got)
	}
	down.Store(true)
	if b.flush(true) {
		t.Fatal("a failed flush reported Redis's answer")
	}
	if got := asks(3); got != 0 {
		t.Errorf("the local budget granted %d retries after the fleet's 5 of 10 executions at Ratio 0.5, want 0", got)
	}
	var errs []error
	for _, e := range ofType(&rec, RetryBudgetLocal) {
		errs = append(errs, e.Err)
	}
	if diff := cmp.Diff([]error{errGone, errGone, errGone}, errs, cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) || errors.Is(b, a) })); diff != "" {
		t.Errorf("RetryBudgetLocal events' Err mismatch (-want +got):\n%s", diff)
	}
	s := b.Snapshot()
	if s.State != StateLocal || s.Reason != errGone.Error() || s.Refused != 3 {
		t.Errorf("Snapshot = %+v; want State %q, Reason %q, Refused 3", s, StateLocal, errGone)
	}
	want := map[string]float64{"local": 1, "retries_granted": 5, "decisions_local": 3, "flushes": 1, "flushes_failed": 1, "executions": 10}
	got := values(t, s)
	delete(got, "headroom")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("values mismatch (-want +got):\n%s", diff)
	}
	down.Store(false)
	redistest.Eventually(t, 5*time.Second, "Redis answers a probe", func() (bool, string) {
		return b.flush(true), fmt.Sprint(b.why())
	})
	b.Deposit()
	b.Deposit()
	if got := asks(1); got != 1 {
		t.Error("the fleet's counts refused a retry for 2 new executions at Ratio 0.5")
	}
	if s := b.Snapshot(); s.State != StateShared || len(ofType(&rec, RetryBudgetLocal)) != 3 {
		t.Errorf("after Redis answered: State %q, %d %s events; want %q and still 3", s.State, len(ofType(&rec, RetryBudgetLocal)), RetryBudgetLocal, StateShared)
	}
}

// Without a ProbeInterval a failed flush keeps the instance local for the
// default 1s: a flush right after it does not ask Redis; one once the
// second has passed does, and Redis's answer makes it shared again.
func TestRetryBudgetDefaultProbeInterval(t *testing.T) {
	rdb := newClient(t)
	down := failing(rdb)
	b := newRetryBudget(rdb, "defaultprobe", []RetryBudgetOption{WithPrefix(testPrefix(t)), WithTimeout(5 * time.Second)})
	b.Deposit()
	down.Store(true)
	start := time.Now()
	b.flush(true)
	down.Store(false)
	b.flush(true)
	if time.Since(start) < 900*time.Millisecond { // else the machine stalled past the interval: nothing to tell
		if v := values(t, b.Snapshot()); v["flushes"] != 1 || v["local"] != 1 {
			t.Errorf("right after a failed flush: flushes %v, local %v; want 1 and 1 (no round trip before the 1s ProbeInterval)", v["flushes"], v["local"])
		}
	}
	redistest.Eventually(t, 5*time.Second, "a probe after the ProbeInterval", func() (bool, string) {
		b.flush(true)
		return b.Snapshot().State == StateShared, fmt.Sprint(b.why())
	})
	if d := time.Since(start); d < time.Second {
		t.Errorf("shared again %v after the failed flush, want not before the 1s ProbeInterval", d)
	}
}

// A reply that is not of the script's shape ({executions, retries}) is a
// failed flush that asking again will not mend: the instance decides
// locally, with a reason that matches ErrUnusable.
func TestRetryBudgetMalformedReply(t *testing.T) {
	rdb := newClient(t)
	rdb.AddHook(scriptHook{reply: []any{int64(1)}})
	var rec eventlog.Recorder
	b := newRetryBudget(rdb, "mangled", []RetryBudgetOption{WithPrefix(testPrefix(t)), WithTimeout(5 * time.Second), WithObserver(&rec)})
	b.Deposit()
	if b.flush(true) {
		t.Fatal("a flush with a malformed reply reported Redis's answer")
	}
	b.Withdraw()
	if s := b.Snapshot(); s.State != StateLocal {
		t.Fatalf("Snapshot State %q after a malformed reply, want %q", s.State, StateLocal)
	}
	if e := ofType(&rec, RetryBudgetLocal); len(e) != 1 || !errors.Is(e[0].Err, ErrUnusable) {
		t.Errorf("RetryBudgetLocal events %v, want one whose Err matches ErrUnusable", e)
	}
}

// On a client that can reload its view of a cluster, a failed flush makes
// the budget ask it to and probe again soon after (100 ms), not a
// ProbeInterval later: the instance is shared again well within its
// ProbeInterval of a minute once Redis answers.
func TestRetryBudgetReloadsClusterView(t *testing.T) {
	base := newClient(t)
	down := failing(base)
	rdb := &reloadingClient{Client: base}
	b := newRetryBudget(rdb, "reload", []RetryBudgetOption{WithPrefix(testPrefix(t)), WithTimeout(5 * time.Second), WithProbeInterval(time.Minute)})
	t.Cleanup(func() { b.Close() })
	b.Deposit()
	down.Store(true)
	if b.flush(true) {
		t.Fatal("a failed flush reported Redis's answer")
	}
	down.Store(false)
	redistest.Eventually(t, 5*time.Second, "a probe soon after the reload", func() (bool, string) {
		b.flush(false)
		return b.Snapshot().State == StateShared, fmt.Sprintf("%d reloads; %v", rdb.reloads.Load(), b.why())
	})
	if n := rdb.reloads.Load(); n != 1 {
		t.Errorf("%d reloads asked after one failed flush, want 1", n)
	}
}
