package bulkhead

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/f0b5b96b/resilience/telemetry"
)

// These tests play, one step at a time, the schedules in which a caller's
// fast path overshoots: it has added its unit to the state (we do that by
// hand, as TryAcquire's first step) and found it over the limit, and other
// callers act before it finishes (overshot, TryAcquire's second step).

// overshoot adds a unit as TryAcquire's fast path does, and checks that it
// overshot; finish with b.overshot().
func overshoot(t *testing.T, b *Bulkhead) {
	t.Helper()
	if m := b.max.Load(); b.state.Add(1) <= m {
		t.Fatal("the add left the state within the limit: no overshoot")
	}
}

func counts(b *Bulkhead) [2]int { return [2]int{b.InFlight(), b.Queued()} }

// wantCounts checks b's InFlight and Queued.
func wantCounts(t *testing.T, b *Bulkhead, inFlight, queued int) {
	t.Helper()
	if got, want := counts(b), [2]int{inFlight, queued}; got != want {
		t.Fatalf("InFlight, Queued = %v, want %v", got, want)
	}
}

// waiting checks that the caller whose result done gets has not returned;
// format says what it means if it has, with a %v for the error.
func waiting(t *testing.T, done <-chan error, format string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf(format, err)
	default:
	}
}

// admitted checks that the caller whose result done gets, who, has
// returned with a slot; unready says what it means if it has not.
func admitted(t *testing.T, done <-chan error, who, unready string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", who, err)
		}
	default:
		t.Fatal(unready)
	}
}

// The slot held is released while the caller overshoots, with nobody
// queued: the caller's unit is a free slot by the time it looks, and it
// keeps it.
func TestOvershootKeepsASlotFreedMeanwhile(t *testing.T) {
	b := New(1)
	_ = b.TryAcquire()
	overshoot(t, b)
	b.Release()
	if !b.overshot() {
		t.Fatal("refused although the slot was released before it looked")
	}
	wantCounts(t, b, 1, 0)
	b.Release()
	wantCounts(t, b, 0, 0)
}

// Nothing is released: the caller gives its unit back and is refused; the
// count is as before.
func TestOvershootGivesBackItsUnit(t *testing.T) {
	b := New(2)
	_, _ = b.TryAcquire(), b.TryAcquire()
	overshoot(t, b)
	if b.overshot() {
		t.Fatal("admitted beyond the limit")
	}
	wantCounts(t, b, 2, 0)
}

// overshootOneQueued sets up the schedules below, in a synctest bubble:
// New(1, WithMaxQueue(1)) with its slot held, a caller overshooting, and
// another caller queued (it found the count at the limit, the unit
// counted). It returns the bulkhead and the queued caller's result.
func overshootOneQueued(t *testing.T) (*Bulkhead, <-chan error) {
	t.Helper()
	b := New(1, WithMaxQueue(1))
	_ = b.TryAcquire()
	overshoot(t, b)
	done := make(chan error, 1)
	go func() { done <- b.Acquire(context.Background()) }()
	synctest.Wait()
	return b, done
}

// The race that loses a slot if the unit is merely given back: while the
// caller overshoots, another caller finds the count at the limit (the
// overshooting unit counted) and joins the queue, and the one slot held is
// released (the count stays at the limit, so the release hands nothing
// on). The slot is free and a caller waits for it: giving the unit back
// must hand that slot to the head of the queue.
func TestOvershootUndoHandsTheFreedSlotToTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, done := overshootOneQueued(t)
		wantCounts(t, b, 2, 1) // the slot held and our unit; one queued
		b.Release()
		synctest.Wait()
		waiting(t, done, "the queued caller returned %v while the overshooting unit was counted")
		if b.overshot() {
			t.Fatal("the overshooting caller kept a unit while a caller was queued")
		}
		synctest.Wait()
		admitted(t, done, "the queued caller", "the freed slot stayed free while a caller waited for it")
		wantCounts(t, b, 1, 0)
		b.Release()
	})
}

// The same with SetLimit raised while the caller overshoots: the raise
// finds the count at the new limit (the unit counted) and hands nothing on;
// giving the unit back must. (overshot once decided on the add's result,
// which showed nobody queued, against the raised limit: it kept the unit,
// passing the queued caller, which waited for ever.)
func TestOvershootUndoAfterSetLimitHandsOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, done := overshootOneQueued(t)
		b.SetLimit(2) // units 2, limit 2: no free slot counted
		synctest.Wait()
		if b.overshot() {
			t.Fatal("the overshooting caller kept a unit while a caller was queued")
		}
		synctest.Wait()
		admitted(t, done, "the queued caller", "the slot SetLimit added stayed free while a caller waited for it")
		wantCounts(t, b, 2, 0)
	})
}

// Acquire's overshoot with a queue ends under the lock (acquireSlow): a
// slot released before it gets there is its own, kept.
// It never waited in the queue: no BulkheadQueuedAdmitted event.
func TestAcquireOvershootKeepsASlotFreedMeanwhile(t *testing.T) {
	var events []telemetry.Type
	b := New(1, WithMaxQueue(1), WithObserver(telemetry.ObserverFunc(func(e telemetry.Event) { events = append(events, e.Type) })))
	_ = b.TryAcquire()
	overshoot(t, b)
	b.Release()
	if err := b.acquireSlow(context.Background()); err != nil {
		t.Fatalf("acquireSlow = %v, want the slot released meanwhile", err)
	}
	wantCounts(t, b, 1, 0)
	if len(events) != 0 {
		t.Errorf("events %v, want none: the caller was not queued", events)
	}
}

// A caller is queued, and the last slot is released while Acquire's unit
// is counted (so the release hands nothing on): Acquire turns its unit into
// a place at the end of the queue, and the slot that leaves free goes to
// the caller queued first, not to it.
func TestAcquireOvershootJoinsBehindAndHandsOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(1, WithMaxQueue(2))
		_ = b.TryAcquire()
		first := make(chan error, 1)
		go func() { first <- b.Acquire(context.Background()) }()
		synctest.Wait()
		overshoot(t, b)
		b.Release() // the unit counted: no free slot seen
		synctest.Wait()
		waiting(t, first, "the first caller returned %v while the unit was counted")
		second := make(chan error, 1)
		go func() { second <- b.acquireSlow(context.Background()) }()
		synctest.Wait()
		admitted(t, first, "the first caller", "the freed slot did not reach the caller queued first")
		waiting(t, second, "the overshooting caller returned %v ahead of its turn")
		wantCounts(t, b, 1, 1)
		b.Release()
		synctest.Wait()
		if err := <-second; err != nil {
			t.Fatalf("the overshooting caller, at its turn: %v", err)
		}
		b.Release()
		wantCounts(t, b, 0, 0)
	})
}

// The last slot's holder releases while a caller is queued: its unit is
// taken back (Release's first step, done by hand) but the slot not yet
// handed on. A Release without a held slot at that moment still panics, and
// the slot goes to the queued caller once, whichever Release hands it on.
func TestReleaseWithoutSlotBeforeTheHandOnPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(1, WithMaxQueue(1))
		_ = b.TryAcquire()
		queued := make(chan error, 1)
		go func() { queued <- b.Acquire(context.Background()) }()
		synctest.Wait()
		s := b.state.Add(-1) // the holder's Release, first step
		wantCounts(t, b, 0, 1)
		func() {
			defer func() {
				if r := recover(); r != "bulkhead: Release without a held slot" {
					t.Fatalf("Release without a slot: panic %v, want the Release without a held slot", r)
				}
			}()
			b.Release()
		}()
		b.releaseSlow(s) // the holder's Release, the rest
		synctest.Wait()
		admitted(t, queued, "the queued caller", "the slot released was not handed on")
		wantCounts(t, b, 1, 0)
		b.Release()
		wantCounts(t, b, 0, 0)
	})
}
