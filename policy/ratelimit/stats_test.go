package ratelimit_test

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
	"github.com/f0b5b96b/resilience/policy/ratelimit"
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
	synctest.Test(t, func(t *testing.T) {
		r := new(eventlog.Recorder)
		fake := clock.NewFake()
		l := ratelimit.New(ratelimit.Every(100*time.Millisecond), 1, ratelimit.WithClock(fake),
			ratelimit.WithName("api"), ratelimit.WithMaxWait(150*time.Millisecond), ratelimit.WithObserver(r))
		ctx := context.Background()
		rejected := func(wait time.Duration) telemetry.Event {
			return telemetry.Event{Type: ratelimit.EventRefused, Name: "api", Err: ratelimit.ErrLimited, Wait: wait}
		}

		if !l.Allow() {
			t.Fatal("first Allow = false")
		}
		wantEvents(t, r) // admitted at once: nothing
		if l.Allow() || l.AllowN(1) {
			t.Fatal("Allow with an empty bucket = true")
		}
		wantEvents(t, r, rejected(0), rejected(0))

		// Wait for the token 100ms away: ratelimit.waited, after the wait.
		done := make(chan error, 1)
		go func() { done <- l.Wait(ctx) }()
		synctest.Wait()
		wantEvents(t, r)
		fake.Advance(100 * time.Millisecond)
		synctest.Wait()
		if err := <-done; err != nil {
			t.Fatalf("Wait = %v", err)
		}
		wantEvents(t, r, telemetry.Event{Type: ratelimit.EventWaited, Name: "api", Wait: 100 * time.Millisecond})

		// Two tokens owed: 200ms is beyond MaxWait, so refused with the hint.
		_ = l.Reserve() // owes the next token
		if err := l.Wait(ctx); !errors.Is(err, ratelimit.ErrLimited) {
			t.Fatalf("Wait beyond MaxWait = %v, want ErrLimited", err)
		}
		wantEvents(t, r, rejected(200*time.Millisecond))

		// A Wait that finds its token there takes it at once: nothing.
		fake.Advance(time.Second)
		if err := l.Wait(ctx); err != nil {
			t.Fatalf("Wait on a full bucket = %v", err)
		}
		wantEvents(t, r)

		// One nanosecond short of the next token: it waits that nanosecond.
		fake.Advance(100*time.Millisecond - 1)
		go func() { done <- l.Wait(ctx) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Wait 1ns before the token = %v at once, want a wait of 1ns", err)
		default:
		}
		fake.Advance(1)
		synctest.Wait()
		if err := <-done; err != nil {
			t.Fatalf("Wait = %v", err)
		}
		wantEvents(t, r, telemetry.Event{Type: ratelimit.EventWaited, Name: "api", Wait: 1})

		if got := l.Stats().Refused; got != 3 {
			t.Errorf("Stats().Refused = %d, want 3", got)
		}
	})
}

func TestStatsAndSnapshot(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(10, 5, ratelimit.WithClock(fake), ratelimit.WithName("api"))
	if !l.AllowN(5) {
		t.Fatal("AllowN(5) = false on a full bucket")
	}
	_ = l.Allow() // refused
	fake.Advance(200 * time.Millisecond)
	if diff := cmp.Diff(ratelimit.Stats{Rate: 10, Burst: 5, Tokens: 2, Refused: 1}, l.Stats(), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("Stats mismatch (-want +got):\n%s", diff)
	}
	want := snapview.View{Kind: ratelimit.Kind, Name: "api", Refused: 1,
		Values: map[string]float64{"rate": 10, "burst": 5, "tokens": 2}}
	if diff := cmp.Diff(want, snapview.Of(l.Snapshot()), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("Snapshot mismatch (-want +got):\n%s", diff)
	}
}

func TestRegister(t *testing.T) {
	reg := telemetry.NewRegistry()
	l := ratelimit.New(10, 5, ratelimit.WithName("api"))
	if err := reg.Register(l); err != nil {
		t.Fatalf("Register = %v", err)
	}
	if err := reg.Register(ratelimit.New(1, 1, ratelimit.WithName("api"))); !errors.Is(err, telemetry.ErrDuplicate) {
		t.Errorf("second Register = %v, want ErrDuplicate", err)
	}
	snaps := reg.Snapshots()
	if len(snaps) != 1 || snaps[0].Kind != ratelimit.Kind || snaps[0].Name != "api" || snapview.Of(snaps[0]).Values["burst"] != 5 {
		t.Errorf("Snapshots = %+v, want the limiter api with burst 5", snaps)
	}
}

// rejected count == rejection events, over a table of schedules.
func TestRejectedMatchesEvents(t *testing.T) {
	for _, tc := range []struct {
		name  string
		allow []int // n per call, 0 = Advance 100ms
	}{
		{"burst then refusals", []int{1, 1, 1, 1, 1}},
		{"refill between", []int{1, 1, 0, 1, 1, 1, 0, 0, 2, 2}},
		{"AllowN large", []int{3, 2, 0, 2, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := clock.NewFake()
			c := telemetry.NewCounter()
			l := ratelimit.New(10, 2, ratelimit.WithClock(fake), ratelimit.WithName("x"), ratelimit.WithObserver(c))
			var refusals uint64
			for _, n := range tc.allow {
				if n == 0 {
					fake.Advance(100 * time.Millisecond)
					continue
				}
				if n <= 2 && !l.AllowN(n) {
					refusals++
				}
			}
			if got, ev := l.Stats().Refused, c.Count("x", ratelimit.EventRefused); got != refusals || ev != refusals {
				t.Errorf("Refused %d, events %d, want %d refusals", got, ev, refusals)
			}
		})
	}
}

// Stats and a refusal allocate nothing, with an observer too.
func TestStatsZeroAllocs(t *testing.T) {
	l := ratelimit.New(1, 1, ratelimit.WithObserver(telemetry.NewCounter()))
	_ = l.Allow()
	_ = l.Allow() // the counter's first event of this type copies its map
	for name, f := range map[string]func(){
		"Stats":         func() { _ = l.Stats() },
		"refused Allow": func() { _ = l.Allow() },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocs, want 0", name, n)
		}
	}
	// Snapshot allocates its Values, once.
	if n := testing.AllocsPerRun(100, func() { _ = l.Snapshot() }); n != 1 {
		t.Errorf("Snapshot: %v allocs, want 1", n)
	}
}
