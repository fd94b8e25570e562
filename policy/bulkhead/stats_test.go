package bulkhead_test

import (
	"context"
	"errors"
	"github.com/f0b5b96b/resilience/internal/snapview"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/eventlog"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
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
	bubble(t, func(t *testing.T) {
		r := new(eventlog.Recorder)
		fake := clock.NewFake()
		b := bulkhead.New(1, bulkhead.WithMaxQueue(1), bulkhead.WithMaxWait(time.Second),
			bulkhead.WithClock(fake), bulkhead.WithName("db"), bulkhead.WithObserver(r))
		rejected := func(err error, wait time.Duration) telemetry.Event {
			return telemetry.Event{Type: bulkhead.EventRefused, Name: "db", Err: err, Wait: wait}
		}

		// A free slot: nothing to say.
		if err := b.Acquire(t.Context()); err != nil {
			t.Fatalf("Acquire = %v", err)
		}
		wantEvents(t, r)

		// Queued, then refused at MaxWait: the wait is the time queued.
		w := acquire(t.Context(), b)
		fake.Advance(time.Second)
		synctest.Wait()
		if err := <-w; !errors.Is(err, bulkhead.ErrQueueTimeout) {
			t.Fatalf("queued Acquire = %v, want ErrQueueTimeout", err)
		}
		wantEvents(t, r, rejected(bulkhead.ErrQueueTimeout, time.Second))

		// Queued, then handed a slot after 300ms; meanwhile a caller finds
		// the queue full, and TryAcquire is refused: both at once, no wait.
		w = acquire(t.Context(), b)
		fake.Advance(300 * time.Millisecond)
		if err := <-acquire(t.Context(), b); !errors.Is(err, bulkhead.ErrFull) {
			t.Fatalf("Acquire with the queue full = %v, want ErrFull", err)
		}
		if b.TryAcquire() {
			t.Fatal("TryAcquire = true with every slot taken")
		}
		wantEvents(t, r, rejected(bulkhead.ErrFull, 0), rejected(bulkhead.ErrFull, 0))
		b.Release()
		synctest.Wait()
		if err := <-w; err != nil {
			t.Fatalf("queued Acquire = %v, want a slot", err)
		}
		wantEvents(t, r, telemetry.Event{Type: bulkhead.EventQueuedAdmitted, Name: "db", Wait: 300 * time.Millisecond})

		// A caller whose ctx ends in the queue is not refused.
		ctx, cancel := context.WithCancel(t.Context())
		w = acquire(ctx, b)
		cancel()
		if err := <-w; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Acquire = %v", err)
		}
		wantEvents(t, r)
		b.Release()

		if diff := cmp.Diff(bulkhead.Stats{Limit: 1, Refused: 3}, b.Stats()); diff != "" {
			t.Errorf("Stats mismatch (-want +got):\n%s", diff)
		}
	})
}

// Without a queue, refusals are counted (and reported) too.
func TestRejectedWithoutQueue(t *testing.T) {
	r := new(eventlog.Recorder)
	b := bulkhead.New(1, bulkhead.WithObserver(r))
	_ = b.Acquire(t.Context())
	for range 3 {
		if err := b.Acquire(t.Context()); !errors.Is(err, bulkhead.ErrFull) {
			t.Fatalf("Acquire = %v, want ErrFull", err)
		}
	}
	ev := telemetry.Event{Type: bulkhead.EventRefused, Err: bulkhead.ErrFull}
	wantEvents(t, r, ev, ev, ev)
	if got := b.Stats().Refused; got != 3 {
		t.Errorf("Stats().Refused = %d, want 3", got)
	}
}

func TestStatsAndSnapshot(t *testing.T) {
	bubble(t, func(t *testing.T) {
		b := bulkhead.New(2, bulkhead.WithMaxQueue(2), bulkhead.WithName("db"))
		_ = b.Acquire(t.Context())
		_ = b.Acquire(t.Context())
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		w := acquire(ctx, b)
		if b.TryAcquire() {
			t.Fatal("TryAcquire = true with every slot taken")
		}
		b.SetLimit(3) // hands the slot to the queued caller
		if err := <-w; err != nil {
			t.Fatalf("queued Acquire = %v", err)
		}
		w = acquire(ctx, b)
		if diff := cmp.Diff(bulkhead.Stats{Limit: 3, InFlight: 3, Queued: 1, Refused: 1}, b.Stats()); diff != "" {
			t.Errorf("Stats mismatch (-want +got):\n%s", diff)
		}
		want := snapview.View{Kind: bulkhead.Kind, Name: "db", Refused: 1,
			Values: map[string]float64{"limit": 3, "in_flight": 3, "queued": 1}}
		if diff := cmp.Diff(want, snapview.Of(b.Snapshot())); diff != "" {
			t.Errorf("Snapshot mismatch (-want +got):\n%s", diff)
		}
		cancel()
		<-w
		for range 3 {
			b.Release()
		}
	})
}

func TestRegister(t *testing.T) {
	reg := telemetry.NewRegistry()
	b := bulkhead.New(4, bulkhead.WithName("db"))
	if err := reg.Register(b); err != nil {
		t.Fatalf("Register = %v", err)
	}
	if err := reg.Register(bulkhead.New(1, bulkhead.WithName("db"))); !errors.Is(err, telemetry.ErrDuplicate) {
		t.Errorf("second Register = %v, want ErrDuplicate", err)
	}
	_ = b.Acquire(t.Context())
	want := []snapview.View{{Kind: bulkhead.Kind, Name: "db", Values: map[string]float64{"limit": 4, "in_flight": 1, "queued": 0}}}
	var got []snapview.View
	for _, s := range reg.Snapshots() {
		got = append(got, snapview.Of(s))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Snapshots mismatch (-want +got):\n%s", diff)
	}
}

// Stats and the refusal path allocate nothing, with an observer too.
func TestStatsZeroAllocs(t *testing.T) {
	b := bulkhead.New(1, bulkhead.WithObserver(telemetry.NewCounter()))
	_ = b.Acquire(t.Context())
	ctx := t.Context()
	_ = b.Acquire(ctx) // the counter's first event of this type copies its map
	for name, f := range map[string]func(){
		"Stats":           func() { _ = b.Stats() },
		"refused Acquire": func() { _ = b.Acquire(ctx) },
		"TryAcquire":      func() { _ = b.TryAcquire() },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocs, want 0", name, n)
		}
	}
	// Snapshot allocates its Values, once.
	if n := testing.AllocsPerRun(100, func() { _ = b.Snapshot() }); n != 1 {
		t.Errorf("Snapshot: %v allocs, want 1", n)
	}
}
