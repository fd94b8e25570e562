package retry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/internal/eventlog"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

// withoutDurations returns events without the duration events
// (retry.call, retry.attempt), which TestObserverDurations checks.
func withoutDurations(events []telemetry.Event) []telemetry.Event {
	var out []telemetry.Event
	for _, e := range events {
		if e.Type != retry.EventCall && e.Type != retry.EventAttempt {
			out = append(out, e)
		}
	}
	return out
}

// wantEvents checks the events r recorded since the last check, but for
// the duration events.
func wantEvents(t *testing.T, r *eventlog.Recorder, want ...telemetry.Event) {
	t.Helper()
	if diff := cmp.Diff(want, withoutDurations(r.Take()), cmpopts.EquateErrors(), cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("events mismatch (-want +got):\n%s", diff)
	}
}

func TestObserverEvents(t *testing.T) {
	r := new(eventlog.Recorder)
	p := retry.New[int](retry.WithName("prices"), retry.WithClock(newSleeper()), retry.WithObserver(r),
		retry.WithBackoff(backoff.Linear(time.Second, time.Second, time.Minute)))
	if got := p.String(); got != "retry(prices)" {
		t.Errorf("String() = %q, want retry(prices)", got)
	}
	ev := func(typ telemetry.Type, attempt int, err error, wait time.Duration) telemetry.Event {
		return telemetry.Event{Type: typ, Name: "prices", Attempt: attempt, Err: err, Wait: wait}
	}
	ctx := context.Background()

	// A first attempt that succeeds says nothing but its duration.
	_, _ = p.Do(ctx, (&script{}).op)
	wantEvents(t, r)

	// Two failures, then a success.
	_, _ = p.Do(ctx, (&script{errs: fails(2, errBoom)}).op)
	wantEvents(t, r,
		ev(retry.EventAttemptFailed, 1, errBoom, 0),
		ev(retry.EventWaiting, 1, errBoom, time.Second),
		ev(retry.EventAttemptFailed, 2, errBoom, 0),
		ev(retry.EventWaiting, 2, errBoom, 2*time.Second),
	)

	// Every attempt fails: the policy gives up, with its reason.
	_, _ = p.Do(ctx, (&script{errs: fails(3, errBoom)}).op)
	wantEvents(t, r,
		ev(retry.EventAttemptFailed, 1, errBoom, 0),
		ev(retry.EventWaiting, 1, errBoom, time.Second),
		ev(retry.EventAttemptFailed, 2, errBoom, 0),
		ev(retry.EventWaiting, 2, errBoom, 2*time.Second),
		ev(retry.EventAttemptFailed, 3, errBoom, 0),
		ev(retry.EventGaveUp, 3, retry.ErrAttempts, 0),
	)

	// An error not worth retrying comes back as it is: no give-up.
	perm := resilience.Permanent(errBoom)
	_, _ = p.Do(ctx, (&script{errs: []error{perm}}).op)
	wantEvents(t, r, ev(retry.EventAttemptFailed, 1, perm, 0))
}

func TestObserverWaitingComesAfterOnRetry(t *testing.T) {
	var order []string
	p := retry.New[int](retry.WithClock(newSleeper()), retry.WithAttempts(2),
		retry.WithOnRetry(func(int, error, time.Duration) { order = append(order, "OnRetry") }),
		retry.WithObserver(telemetry.ObserverFunc(func(e telemetry.Event) {
			if e.Type != retry.EventCall && e.Type != retry.EventAttempt {
				order = append(order, string(e.Type))
			}
		})))
	_, _ = p.Do(context.Background(), (&script{errs: fails(1, errBoom)}).op)
	want := []string{"retry.attempt_failed", "OnRetry", "retry.waiting"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Fatalf("order mismatch (-want +got):\n%s", diff)
	}
}

func TestObserverGaveUpReasons(t *testing.T) {
	bg := context.Background()
	canceled, cancel := context.WithCancel(bg)
	defer cancel()
	budget := retry.NewBudget(retry.BudgetConfig{Ratio: 0.01, MinPerSecond: resilience.Off, Window: time.Second})
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		opts     []retry.Option
		errs     []error
		attempts int
		want     error
	}{
		{"attempts", bg, nil, fails(3, errBoom), 3, retry.ErrAttempts},
		{"max elapsed", bg, []retry.Option{retry.WithMaxElapsed(time.Second), retry.WithBackoff(backoff.Constant(2 * time.Second))}, fails(3, errBoom), 1, retry.ErrMaxElapsed},
		{"hint past max wait", bg, nil, []error{hinted{time.Minute}}, 1, retry.ErrMaxWait},
		{"budget", bg, []retry.Option{retry.WithBudget(budget)}, fails(3, errBoom), 1, retry.ErrBudgetExhausted},
		{"canceled", canceled, nil, fails(3, errBoom), 1, context.Canceled},
		{"deadline ahead", deadlineCtx{bg, time.Unix(0, 0)}, nil, fails(3, errBoom), 1, context.DeadlineExceeded},
	} {
		r := new(eventlog.Recorder)
		opts := append([]retry.Option{retry.WithClock(newSleeper()), retry.WithObserver(r)}, tc.opts...)
		op := (&script{errs: tc.errs}).op
		if tc.ctx == canceled {
			op = cancelling(op, cancel) // the caller cancels during the first attempt
		}
		_, err := retry.New[int](opts...).Do(tc.ctx, op)
		var re *retry.Error
		if !errors.As(err, &re) {
			t.Fatalf("%s: err = %v, want a *retry.Error", tc.name, err)
		}
		events := withoutDurations(r.Take())
		last := events[len(events)-1]
		want := telemetry.Event{Type: retry.EventGaveUp, Attempt: tc.attempts, Err: tc.want}
		if diff := cmp.Diff(want, last, cmpopts.EquateErrors()); diff != "" || last.Err != re.Reason {
			t.Errorf("%s: last event mismatch (-want +got):\n%s", tc.name, diff)
		}
		var gaveUp int
		for _, e := range events {
			if e.Type == retry.EventGaveUp {
				gaveUp++
			}
		}
		if gaveUp != 1 {
			t.Errorf("%s: %d gave_up events, want 1", tc.name, gaveUp)
		}
	}
}

func TestObservedSuccessDoesNotAllocate(t *testing.T) {
	var c telemetry.Counter
	p := retry.New[int](retry.WithObserver(&c))
	op := func(context.Context) (int, error) { return 1, nil }
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() { _, _ = p.Do(ctx, op) }); n != 0 {
		t.Errorf("%v allocs per observed successful call, want 0", n)
	}
	want := []telemetry.Count{{Name: "", Type: retry.EventAttempt, N: 1001}, {Name: "", Type: retry.EventCall, N: 1001}}
	if diff := cmp.Diff(want, c.Counts(), cmpopts.SortSlices(func(a, b telemetry.Count) bool { return a.Type < b.Type })); diff != "" {
		t.Errorf("successful calls emitted (-want +got):\n%s", diff)
	}
}

// With an observer, each attempt reports its duration (retry.attempt) and
// each call its own (retry.call: the attempts and the waits), on the
// policy's clock, with the error each returned.
func TestObserverDurations(t *testing.T) {
	r := new(eventlog.Recorder)
	clk := newSleeper()
	p := retry.New[int](retry.WithName("prices"), retry.WithClock(clk), retry.WithObserver(r), retry.WithAttempts(3),
		retry.WithBackoff(backoff.Constant(time.Second)))
	slow := func(d time.Duration, errs ...error) resilience.Op[int] {
		s := &script{errs: errs}
		return func(ctx context.Context) (int, error) { clk.Advance(d); return s.op(ctx) }
	}
	durations := func() []telemetry.Event {
		var out []telemetry.Event
		for _, e := range r.Take() {
			if e.Type == retry.EventCall || e.Type == retry.EventAttempt {
				out = append(out, e)
			}
		}
		return out
	}
	ctx := context.Background()

	_, _ = p.Do(ctx, slow(20*time.Millisecond))
	want := []telemetry.Event{
		{Type: retry.EventAttempt, Name: "prices", Attempt: 1, Elapsed: 20 * time.Millisecond},
		{Type: retry.EventCall, Name: "prices", Elapsed: 20 * time.Millisecond},
	}
	if diff := cmp.Diff(want, durations(), cmpopts.EquateErrors()); diff != "" {
		t.Fatalf("success: events mismatch (-want +got):\n%s", diff)
	}

	_, err := p.Do(ctx, slow(10*time.Millisecond, errBoom, errBoom))
	want = []telemetry.Event{
		{Type: retry.EventAttempt, Name: "prices", Attempt: 1, Err: errBoom, Elapsed: 10 * time.Millisecond},
		{Type: retry.EventAttempt, Name: "prices", Attempt: 2, Err: errBoom, Elapsed: 10 * time.Millisecond},
		{Type: retry.EventAttempt, Name: "prices", Attempt: 3, Elapsed: 10 * time.Millisecond},
		{Type: retry.EventCall, Name: "prices", Err: err, Elapsed: 2*time.Second + 30*time.Millisecond},
	}
	if diff := cmp.Diff(want, durations(), cmpopts.EquateErrors()); diff != "" {
		t.Fatalf("two retries: events mismatch (-want +got):\n%s", diff)
	}

	_, err = p.Do(ctx, slow(time.Millisecond, errBoom, errBoom, errBoom))
	if err == nil {
		t.Fatal("three failures: err = nil")
	}
	got := durations()
	if last := got[len(got)-1]; last.Type != retry.EventCall || last.Err != err || last.Elapsed != 2*time.Second+3*time.Millisecond {
		t.Fatalf("gave up: call event = %+v, want retry.call with the returned error and 2.003s", last)
	}
}

func BenchmarkSuccessObserved(b *testing.B) {
	p := retry.New[int](retry.WithObserver(new(telemetry.Counter)))
	op := func(context.Context) (int, error) { return 1, nil }
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.Do(ctx, op)
	}
}

func BenchmarkTwoFailuresThenSuccessObserved(b *testing.B) {
	p := retry.New[int](retry.WithBackoff(backoff.Constant(0)), retry.WithObserver(new(telemetry.Counter)))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		_, _ = p.Do(ctx, func(context.Context) (int, error) {
			if n++; n < 3 {
				return 0, errBoom
			}
			return n, nil
		})
	}
}
