package breaker_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// On the real clock (in a synctest bubble: virtual time), refusals within
// a millisecond share one error and read no clock: the hint stays what it
// was when the error was made until the hint's timer fires.
func TestRealClockRefusalsShareTheirHintForAMillisecond(t *testing.T) {
	bubble(t, func(t *testing.T) {
		b := breaker.New(breaker.WithThreshold(1), breaker.WithCooldown(time.Second))
		b.Record(true)
		time.Sleep(900 * time.Microsecond)
		wantRefused(t, b, breaker.ErrOpen, time.Second) // 999.1ms left, rounded up
		time.Sleep(300 * time.Microsecond)
		// 998.8ms left, but the error is shared: no clock read.
		wantRefused(t, b, breaker.ErrOpen, time.Second)
		time.Sleep(800 * time.Microsecond) // the hint went stale 1ms after it was made
		wantRefused(t, b, breaker.ErrOpen, 998*time.Millisecond)
		if n := testing.AllocsPerRun(100, func() { _, _ = b.Allow() }); n != 0 {
			t.Errorf("a refusal allocates %v times, want 0", n)
		}
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
