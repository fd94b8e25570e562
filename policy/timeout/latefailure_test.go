package timeout_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/eventlog"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/telemetry"
)

// An abandoning policy whose op fails just after the deadline (the op
// itself moves the fake clock past it, then returns its error) returns
// either the op's result, as an expiry wrapping the op's error, or, if it
// woke at the deadline before the result reached it, the bare expiry after
// abandoning the op. Which one is the scheduler's pick; either way the
// expiry is said exactly once, and the abandon exactly when the op's
// result was dropped. With one P the op's goroutine runs on until it has
// returned before the woken policy runs, so the repetitions take the path
// where the policy sees the result (the one a missing expired event would
// go unnoticed on) all but surely, without the test depending on it.
func TestObserverAbandonOpFailingJustAfterTheDeadline(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	expired := telemetry.Event{Type: timeout.EventExpired, Elapsed: time.Second}
	abandoned := telemetry.Event{Type: timeout.EventAbandoned, Elapsed: time.Second}
	errOp := errors.New("op failed")
	sawResult := 0
	const rounds = 20
	for i := range rounds {
		clk := clock.NewFake()
		r := new(eventlog.Recorder)
		p := timeout.New[int](time.Second, timeout.WithAbandon(true), timeout.WithClock(clk), timeout.WithObserver(r))
		_, err := p.Do(context.Background(), func(context.Context) (int, error) {
			clk.Advance(time.Second) // the deadline passes while the op runs
			return 0, errOp
		})
		if !errors.Is(err, timeout.ErrTimeout) {
			t.Fatalf("round %d: err = %v, want a match for ErrTimeout", i, err)
		}
		want := []telemetry.Event{expired, abandoned}
		if errors.Is(err, errOp) { // the policy saw the op's result
			sawResult++
			want = want[:1]
		}
		if diff := cmp.Diff(want, r.Take(), cmpopts.EquateErrors(), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round %d: err = %v: events mismatch (-want +got):\n%s", i, err, diff)
		}
	}
	t.Logf("the policy saw the op's result in %d of %d rounds", sawResult, rounds)
}
