package breaker_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// On the real clock (in a synctest bubble: virtual time), refusals share
// one error and read no clock for 1/64 of the cooldown left (at least a
// millisecond): the hint stays what it was when the error was made until
// the hint's timer fires.
func TestRealClockRefusalsShareTheirHint(t *testing.T) {
	bubble(t, func(t *testing.T) {
		b := breaker.New(breaker.WithThreshold(1), breaker.WithCooldown(time.Second))
		b.Record(true)
		time.Sleep(900 * time.Microsecond)
		wantRefused(t, b, breaker.ErrOpen, time.Second) // 999.1ms left, rounded up: fresh for 15.6ms
		time.Sleep(10 * time.Millisecond)
		// 989.1ms left, but the error is shared: no clock read.
		wantRefused(t, b, breaker.ErrOpen, time.Second)
		time.Sleep(6 * time.Millisecond) // the hint went stale 15.6ms after it was made
		wantRefused(t, b, breaker.ErrOpen, 984*time.Millisecond)
		if n := testing.AllocsPerRun(100, func() { _, _ = b.Allow() }); n != 0 {
			t.Errorf("a refusal allocates %v times, want 0", n)
		}
		// Near the end a hint lives a millisecond.
		time.Sleep(983*time.Millisecond - 40*time.Millisecond)
		wantRefused(t, b, breaker.ErrOpen, 41*time.Millisecond) // 40.1ms left
		time.Sleep(1100 * time.Microsecond)
		wantRefused(t, b, breaker.ErrOpen, 39*time.Millisecond) // 39ms left: stale after 1ms
	})
}

// The hint never outlives the cooldown: the first call after the cooldown
// ends (and the hint's timer, due then, has run) is admitted as a trial,
// even when a refusal came less than a millisecond before the end.
func TestRealClockHintEndsWithTheCooldown(t *testing.T) {
	bubble(t, func(t *testing.T) {
		b := breaker.New(breaker.WithThreshold(1), breaker.WithCooldown(time.Second))
		b.Record(true)
		time.Sleep(time.Second - 300*time.Microsecond)
		wantRefused(t, b, breaker.ErrOpen, time.Millisecond)
		time.Sleep(300 * time.Microsecond)
		synctest.Wait() // the hint's timer, due now too, has run
		p, err := b.Allow()
		if err != nil {
			t.Fatalf("Allow at the end of the cooldown = %v, want a trial", err)
		}
		p.Done(nil)
		wantState(t, b, breaker.Closed)
	})
}

// A new opening does not reuse the hint of the one before, even while that
// hint is fresh.
func TestRealClockHintIsPerOpening(t *testing.T) {
	bubble(t, func(t *testing.T) {
		b := breaker.New(breaker.WithThreshold(1), breaker.WithCooldown(time.Second))
		b.Record(true)
		wantRefused(t, b, breaker.ErrOpen, time.Second)
		b.Reset()
		time.Sleep(100 * time.Microsecond)
		b.Record(true)
		wantRefused(t, b, breaker.ErrOpen, time.Second) // the new opening's
		b.ForceOpen()
		_, err := b.Allow()
		if !errors.Is(err, breaker.ErrForcedOpen) {
			t.Fatalf("Allow = %v, want ErrForcedOpen", err)
		}
	})
}

// On a fake clock every refusal reads the clock: its hint is exact.
func TestFakeClockHintIsExact(t *testing.T) {
	f := clock.NewFake()
	b := breaker.New(breaker.WithClock(f), breaker.WithThreshold(1), breaker.WithCooldown(time.Second))
	b.Record(true)
	wantRefused(t, b, breaker.ErrOpen, time.Second)
	f.Advance(1500 * time.Microsecond)
	wantRefused(t, b, breaker.ErrOpen, 999*time.Millisecond)
	f.Advance(998*time.Millisecond + 500*time.Microsecond)
	wantState(t, b, breaker.HalfOpen)
}

// A refusal of a new opening never shares the hint of an earlier one,
// fresh as that may be: its RetryAfter is the new cooldown's.
func TestRealClockHintOfAnEarlierOpeningIsNotShared(t *testing.T) {
	bubble(t, func(t *testing.T) {
		b := breaker.New(breaker.WithThreshold(1), breaker.WithCooldown(time.Second))
		b.Record(true)
		time.Sleep(10 * time.Millisecond)
		wantRefused(t, b, breaker.ErrOpen, 990*time.Millisecond) // fresh for about 15ms
		b.Reset()
		b.Record(true)
		wantRefused(t, b, breaker.ErrOpen, time.Second)
		b.Reset() // stops the hint's timer
	})
}
