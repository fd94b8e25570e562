package timeout_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/eventlog"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/telemetry"
)

// wantEvents checks the events r recorded since the last check.
func wantEvents(t *testing.T, what string, r *eventlog.Recorder, want ...telemetry.Event) {
	t.Helper()
	if diff := cmp.Diff(want, r.Take(), cmpopts.EquateErrors(), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s: events mismatch (-want +got):\n%s", what, diff)
	}
}

func TestObserverEvents(t *testing.T) {
	expired := telemetry.Event{Type: timeout.EventExpired, Name: "quotes", Elapsed: time.Second}
	abandoned := telemetry.Event{Type: timeout.EventAbandoned, Name: "quotes", Elapsed: time.Second}
	errOp := errors.New("op failed")
	inTime := func(context.Context) (int, error) { return 0, errOp }
	lateSuccess := func(ctx context.Context) (int, error) { <-ctx.Done(); return 1, nil }
	for _, tc := range []struct {
		name    string
		abandon bool
		cancel  bool // the caller cancels after 500ms
		op      func(*stubborn) func(context.Context) (int, error)
		want    []telemetry.Event
	}{
		{"in time", false, false, func(*stubborn) func(context.Context) (int, error) { return inTime }, nil},
		{"expiry", false, false, func(*stubborn) func(context.Context) (int, error) { return (&waitDone{}).op }, []telemetry.Event{expired}},
		{"late success", false, false, func(*stubborn) func(context.Context) (int, error) { return lateSuccess }, nil},
		{"caller cancels", false, true, func(*stubborn) func(context.Context) (int, error) { return (&waitDone{}).op }, nil},
		{"abandon in time", true, false, func(*stubborn) func(context.Context) (int, error) { return inTime }, nil},
		{"abandon at expiry", true, false, func(s *stubborn) func(context.Context) (int, error) { return s.op }, []telemetry.Event{expired, abandoned}},
		{"abandon, caller cancels", true, true, func(s *stubborn) func(context.Context) (int, error) { return s.op }, []telemetry.Event{abandoned}},
		{"abandon, op honours expiry", true, false, func(*stubborn) func(context.Context) (int, error) { return (&waitDone{}).op }, []telemetry.Event{expired}},
	} {
		synctest.Test(t, func(t *testing.T) {
			r := new(eventlog.Recorder)
			p := timeout.New[int](time.Second, timeout.WithName("quotes"), timeout.WithObserver(r), timeout.WithAbandon(tc.abandon))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				time.AfterFunc(500*time.Millisecond, cancel)
			}
			s := newStubborn()
			_, err := p.Do(ctx, tc.op(s))
			if tc.name == "abandon, op honours expiry" {
				// The op returns at the deadline, as the policy does: whether
				// the policy sees its result first or returns while it is
				// still on its way (and so abandons it) is the scheduler's
				// pick. Either way the expiry is said, once, first.
				got := r.Take()
				if diff := cmp.Diff(tc.want, got[:min(len(got), 1)], cmpopts.EquateErrors()); diff != "" || len(got) > 2 || (len(got) == 2 && got[1] != abandoned) {
					t.Errorf("%s: events %v, want [expired] or [expired abandoned]", tc.name, got)
				}
			} else {
				wantEvents(t, tc.name, r, tc.want...)
			}
			if got, want := errors.Is(err, timeout.ErrTimeout), len(tc.want) > 0 && tc.want[0] == expired; got != want {
				t.Errorf("%s: err = %v: matches ErrTimeout %v, want %v (timeout.expired is said exactly when it is returned)", tc.name, err, got, want)
			}
			close(s.release)
			synctest.Wait()
		})
	}
}

// An abandoning policy on a fake clock reports the expiry before Do
// returns, and nothing more when the op returns later.
func TestObserverAbandonFakeClock(t *testing.T) {
	clk := clock.NewFake()
	r := new(eventlog.Recorder)
	s := newStubborn()
	done := make(chan error)
	go func() {
		_, err := timeout.New[int](2*time.Second, timeout.WithAbandon(true), timeout.WithClock(clk), timeout.WithObserver(r)).Do(context.Background(), s.op)
		done <- err
	}()
	blockUntil(t, clk, 1)
	clk.Advance(2 * time.Second)
	checkExpired(t, recv(t, done, "Do after the deadline"), "timeout: call exceeded 2s")
	close(s.release)
	recv(t, s.returned, "the abandoned op's return once released")
	wantEvents(t, "abandon", r,
		telemetry.Event{Type: timeout.EventExpired, Elapsed: 2 * time.Second},
		telemetry.Event{Type: timeout.EventAbandoned, Elapsed: 2 * time.Second})
}

// An observer that allocates nothing adds no allocation to a call, in time
// or expired.
func TestObserverAddsNoAllocation(t *testing.T) {
	ctx := context.Background()
	var n int
	obs := telemetry.ObserverFunc(func(telemetry.Event) { n++ })
	op := func(ctx context.Context) (int, error) { _ = ctx.Done(); return 1, nil }
	plain, observed := timeout.New[int](time.Second), timeout.New[int](time.Second, timeout.WithObserver(obs))
	if base, got := testing.AllocsPerRun(1000, func() { _, _ = plain.Do(ctx, op) }), testing.AllocsPerRun(1000, func() { _, _ = observed.Do(ctx, op) }); got > base {
		t.Errorf("in time with an observer: %v allocs per call, without: %v", got, base)
	}
	synctest.Test(t, func(t *testing.T) {
		late := func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() }
		base := testing.AllocsPerRun(100, func() { _, _ = plain.Do(ctx, late) })
		n = 0
		if got := testing.AllocsPerRun(100, func() { _, _ = observed.Do(ctx, late) }); got > base {
			t.Errorf("expiry with an observer: %v allocs per call, without: %v", got, base)
		}
		if n != 101 { // AllocsPerRun runs the function once more to warm up
			t.Errorf("observer saw %d events in 101 expired calls", n)
		}
	})
}

func TestObserverNotInJSON(t *testing.T) {
	c := timeout.Config{Name: "quotes", Observer: telemetry.NewCounter()}
	got, err := c.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"Name":"quotes"}`, string(got)); diff != "" {
		t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
	}
	if err := new(timeout.Config).UnmarshalJSON([]byte(`{"Observer": "x"}`)); err == nil {
		t.Error(`Unmarshal({"Observer": "x"}) = nil, want an unknown field error`)
	}
}

// WithConfig keeps an earlier observer and name unless its Config sets
// them.
func TestWithConfigKeepsObserver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := new(eventlog.Recorder)
		p := timeout.New[int](time.Second, timeout.WithObserver(r), timeout.WithName("a"),
			timeout.WithConfig(timeout.Config{Duration: 2 * time.Second}))
		_, _ = p.Do(context.Background(), (&waitDone{}).op)
		wantEvents(t, "merged", r, telemetry.Event{Type: timeout.EventExpired, Name: "a", Elapsed: 2 * time.Second})
		r2 := new(eventlog.Recorder)
		p = timeout.New[int](time.Second, timeout.WithObserver(r), timeout.WithConfig(timeout.Config{Name: "b", Observer: r2}))
		_, _ = p.Do(context.Background(), (&waitDone{}).op)
		wantEvents(t, "replaced: old observer", r)
		wantEvents(t, "replaced: new observer", r2, telemetry.Event{Type: timeout.EventExpired, Name: "b", Elapsed: time.Second})
	})
}
