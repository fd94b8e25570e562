package breaker_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/internal/eventlog"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

// wantEvents checks the events r recorded since the last check.
func wantEvents(t *testing.T, r *eventlog.Recorder, want ...telemetry.Event) {
	t.Helper()
	if diff := cmp.Diff(want, r.Take(), cmpopts.EquateErrors(), cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("events mismatch (-want +got):\n%s", diff)
	}
}

func TestObserverEvents(t *testing.T) {
	r := new(eventlog.Recorder)
	b, f := newFake(breaker.WithName("db"), breaker.WithThreshold(2), breaker.WithCooldown(time.Minute),
		breaker.WithObserver(r))
	p := breaker.Policy[int](b)
	ctx := context.Background()
	ev := func(typ telemetry.Type, err error) telemetry.Event {
		return telemetry.Event{Type: typ, Name: "db", Err: err}
	}
	tr := func(typ telemetry.Type, from, to string, wait time.Duration) telemetry.Event {
		return telemetry.Event{Type: typ, Name: "db", From: from, To: to, Wait: wait}
	}
	refused := func(err error, wait time.Duration) telemetry.Event {
		return telemetry.Event{Type: breaker.EventRefused, Name: "db", Err: err, Wait: wait}
	}

	// Closed: a success says nothing; a failure and an ignored outcome do.
	_, _ = p.Do(ctx, func(context.Context) (int, error) { return 1, nil })
	wantEvents(t, r)
	_, _ = p.Do(ctx, func(context.Context) (int, error) { return 0, errBoom })
	wantEvents(t, r, ev(breaker.EventFailure, errBoom))
	cctx, cancel := context.WithCancel(ctx)
	_, _ = p.Do(cctx, func(context.Context) (int, error) { cancel(); return 0, context.Canceled })
	wantEvents(t, r, ev(breaker.EventIgnored, context.Canceled))
	_, _ = p.Do(ctx, func(context.Context) (int, error) { return 0, resilience.Refuse(breaker.ErrOpen, "inner", -1) })
	wantEvents(t, r, ev(breaker.EventIgnored, breaker.ErrOpen)) // another guard's refusal

	// The failure that trips comes before the opening; Report has no error.
	succeed(t, b, f, 1) // resets the streak
	fail(t, b, f, 1)
	wantEvents(t, r, ev(breaker.EventFailure, nil))
	b.Record(true)
	wantEvents(t, r, ev(breaker.EventFailure, nil),
		tr(breaker.EventOpened, "closed", "open", time.Minute))

	// Open: refusals carry the wait left.
	f.Advance(20 * time.Second)
	wantRefused(t, b, breaker.ErrOpen, 40*time.Second)
	wantEvents(t, r, refused(breaker.ErrOpen, 40*time.Second))

	// Half-open: an ignored trial, too many trials, a failed trial.
	f.Advance(40 * time.Second)
	trial, err := b.Allow()
	if err != nil {
		t.Fatal(err)
	}
	wantEvents(t, r, tr(breaker.EventHalfOpened, "open", "half-open", 0))
	f.Advance(time.Second)
	wantRefused(t, b, breaker.ErrTooManyTrials, time.Minute-time.Second)
	wantEvents(t, r, refused(breaker.ErrTooManyTrials, time.Minute-time.Second))
	trial.Report(breaker.Ignored)
	wantEvents(t, r, ev(breaker.EventIgnored, nil))
	_, _ = p.Do(ctx, func(context.Context) (int, error) { return 0, errBoom })
	wantEvents(t, r, ev(breaker.EventFailure, errBoom),
		tr(breaker.EventOpened, "half-open", "open", time.Minute))

	// A successful trial closes.
	f.Advance(time.Minute)
	succeed(t, b, f, 1)
	wantEvents(t, r, tr(breaker.EventHalfOpened, "open", "half-open", 0),
		tr(breaker.EventClosed, "half-open", "closed", 0))

	// Manual control: only state changes are transitions.
	b.Reset()
	b.ForceOpen()
	b.ForceOpen()
	wantEvents(t, r, tr(breaker.EventOpened, "closed", "open", resilience.Never))
	wantRefused(t, b, breaker.ErrForcedOpen, resilience.Never)
	wantEvents(t, r, refused(breaker.ErrForcedOpen, resilience.Never))
	b.ForceClosed()
	wantEvents(t, r, tr(breaker.EventClosed, "open", "closed", 0))

	// A stale report says nothing.
	stale, _ := b.Allow()
	b.Reset()
	stale.Done(errBoom)
	wantEvents(t, r)
}

func TestObserverAfterOnStateChange(t *testing.T) {
	var order []string
	var mu sync.Mutex
	add := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	b, f := newFake(breaker.WithThreshold(1),
		breaker.WithOnStateChange(func(tr breaker.Transition) { add("callback " + tr.To.String()) }),
		breaker.WithObserver(telemetry.ObserverFunc(func(e telemetry.Event) { add("observer " + string(e.Type)) })))
	fail(t, b, f, 1)
	b.Reset()
	want := []string{"observer breaker.failure", "callback open", "observer breaker.opened", "callback closed", "observer breaker.closed"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Fatalf("delivery order mismatch (-want +got):\n%s", diff)
	}
}

func TestObserverMayCallTheBreaker(t *testing.T) {
	// Events are delivered outside the breaker's lock: an observer may
	// read the breaker, which would deadlock under it.
	var b *breaker.Breaker
	var states []string
	b, f := newFake(breaker.WithThreshold(1), breaker.WithObserver(telemetry.ObserverFunc(func(e telemetry.Event) {
		states = append(states, string(e.Type)+" "+b.Stats().State.String())
	})))
	done := make(chan struct{})
	go func() {
		defer close(done)
		fail(t, b, f, 1)
		_, _ = b.Allow()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a call whose observer reads the breaker did not return within 10s")
	}
	want := []string{"breaker.failure open", "breaker.opened open", "breaker.refused open"}
	if diff := cmp.Diff(want, states); diff != "" {
		t.Fatalf("observed mismatch (-want +got):\n%s", diff)
	}
}

func TestSuccessEmitsNoEvent(t *testing.T) {
	var c telemetry.Counter
	for _, opts := range [][]breaker.Option{
		nil,
		{breaker.WithFailureRatio(0.5)},
		{breaker.WithFailureRatio(0.5), breaker.WithWindowDuration(time.Minute)},
		{breaker.WithSlowCall(time.Second)},
	} {
		b, _ := newFake(append(opts, breaker.WithObserver(&c))...)
		p := breaker.Policy[int](b)
		op := func(context.Context) (int, error) { return 1, nil }
		if n := testing.AllocsPerRun(1000, func() {
			pm, _ := b.Allow()
			pm.Done(nil)
			_, _ = p.Do(context.Background(), op)
		}); n != 0 {
			t.Errorf("%d options: a success with an observer allocates %v times", len(opts), n)
		}
		if got := b.Stats().Counts.Successes; got == 0 {
			t.Errorf("%d options: no success counted", len(opts))
		}
	}
	if got := c.Counts(); len(got) != 0 {
		t.Fatalf("successes emitted events: %v", got)
	}
}

func TestRefusalCostsOneNonAllocatingCall(t *testing.T) {
	var calls atomic.Int64
	b, f := newFake(breaker.WithThreshold(1), breaker.WithObserver(telemetry.ObserverFunc(func(telemetry.Event) { calls.Add(1) })))
	fail(t, b, f, 1)
	calls.Store(0)
	if n := testing.AllocsPerRun(100, func() { _, _ = b.Allow() }); n != 0 {
		t.Errorf("an observed refusal allocates %v times", n)
	}
	if got := calls.Load(); got != 101 { // AllocsPerRun runs once more than asked
		t.Errorf("101 refusals made %d observer calls, want 101", got)
	}
	b.ForceOpen()
	calls.Store(0)
	if n := testing.AllocsPerRun(100, func() { _, _ = b.Allow() }); n != 0 {
		t.Errorf("an observed forced refusal allocates %v times", n)
	}
	if got := calls.Load(); got != 101 {
		t.Errorf("101 forced refusals made %d observer calls, want 101", got)
	}
	// With a counting observer too.
	var c telemetry.Counter
	b2, f2 := newFake(breaker.WithName("db"), breaker.WithThreshold(1), breaker.WithObserver(&c))
	fail(t, b2, f2, 1)
	_, _ = b2.Allow() // the first event of its key adds it to the counter
	if n := testing.AllocsPerRun(100, func() { _, _ = b2.Allow() }); n != 0 {
		t.Errorf("a refusal counted by a Counter allocates %v times", n)
	}
	if got := c.Count("db", breaker.EventRefused); got != 102 {
		t.Errorf("Counter counted %d refusals, want 102", got)
	}
}
