package breaker

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Every call returns, and returns with the breaker's lock released, on
// each of its paths: a Breaker is for simultaneous use, and a call that
// kept the lock would leave every later call that takes it (a failure, a
// transition, State, Counts, Stats) waiting for ever. Each call runs under
// a bound (within), and a TryLock right after it checks the lock, so that
// a path that keeps the lock, takes it twice or spins fails the test at
// once instead of hanging it.

// released fails if b's lock is held after the call named what. Like
// recvWithin, it fails with a panic: the tests and examples after this one
// would hang on the same fault.
func released(t *testing.T, b *Breaker, what string) {
	t.Helper()
	if !b.mu.TryLock() {
		panic(t.Name() + ": " + what + " returned with the breaker's lock held")
	}
	b.mu.Unlock()
}

// call runs f, the call named what, under a bound, then checks that it
// left b's lock released.
func call(t *testing.T, b *Breaker, what string, f func()) {
	t.Helper()
	do(t, what, f)
	released(t, b, what)
}

// nowHookClock is a fake clock that runs a hook, once, from a reading of
// the time: the instant between a call's first look at the state word and
// the lock it then takes.
type nowHookClock struct {
	*clock.Fake
	hook atomic.Pointer[func()]
}

func (c *nowHookClock) Now() time.Time {
	if f := c.hook.Swap(nil); f != nil {
		(*f)()
	}
	return c.Fake.Now()
}

func (c *nowHookClock) at(f func()) { c.hook.Store(&f) }

var errLock = errors.New("failed")

func TestEveryCallReleasesTheLock(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"plain", nil},
		{"observed", []Option{WithObserver(telemetry.ObserverFunc(func(telemetry.Event) {})), WithOnStateChange(func(Transition) {})}},
		{"slow calls", []Option{WithSlowCall(time.Second)}},
		{"time window", []Option{WithWindowDuration(time.Minute)}},
		{"count window", []Option{WithWindowCalls(10)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &nowHookClock{Fake: clock.NewFake()}
			opts := append([]Option{WithClock(c), WithThreshold(1), WithCooldown(time.Minute),
				WithTrialTimeout(time.Second)}, tc.opts...)
			b := New(opts...)
			var (
				p   Permit
				err error
				st  State
			)
			state := func(what string, want State) {
				t.Helper()
				call(t, b, what, func() { st = b.State() })
				if st != want {
					t.Fatalf("State() after %s = %v, want %v", what, st, want)
				}
			}

			for i := range 3 {
				call(t, b, "Allow of a closed breaker", func() { p, err = b.Allow() })
				if err != nil {
					t.Fatalf("Allow of a closed breaker = %v, want admitted", err)
				}
				call(t, b, "Done of a success", func() { p.Done(nil) })
				if i == 1 {
					call(t, b, "Record of a success", func() { b.Record(false) })
				}
			}
			call(t, b, "Counts of a closed breaker", func() { _ = b.Counts() })
			call(t, b, "Stats of a closed breaker", func() { _ = b.Stats() })
			call(t, b, "SetThreshold", func() { b.SetThreshold(1) })
			call(t, b, "Record of the failure that trips it", func() { b.Record(true) })
			call(t, b, "Allow of an open breaker", func() { _, err = b.Allow() })
			if !errors.Is(err, ErrOpen) {
				t.Fatalf("Allow of an open breaker = %v, want ErrOpen", err)
			}
			call(t, b, "Stats of an open breaker", func() { _ = b.Stats() })

			c.Advance(time.Minute)
			state("the cooldown", HalfOpen)
			state("a look at the half-open breaker", HalfOpen)
			call(t, b, "Allow of a trial", func() { p, err = b.Allow() })
			if err != nil {
				t.Fatalf("Allow of a half-open breaker = %v, want a trial", err)
			}
			call(t, b, "Allow refused beside the trial", func() { _, err = b.Allow() })
			if !errors.Is(err, ErrTooManyTrials) {
				t.Fatalf("Allow beside the trial = %v, want ErrTooManyTrials", err)
			}
			call(t, b, "Report(Ignored) of a trial", func() { p.Report(Ignored) })

			call(t, b, "Allow of a second trial", func() { p, err = b.Allow() })
			if err != nil {
				t.Fatalf("Allow of a half-open breaker = %v, want a trial", err)
			}
			c.Advance(time.Second) // the trial expires: open again
			call(t, b, "Done of an expired trial", func() { p.Done(nil) })
			state("the trial's expiry", Open)

			c.Advance(time.Minute)
			call(t, b, "Allow of a third trial", func() { p, err = b.Allow() })
			if err != nil {
				t.Fatalf("Allow of a half-open breaker = %v, want a trial", err)
			}
			call(t, b, "Done of a successful trial", func() { p.Done(nil) })
			state("the trial's success", Closed)

			call(t, b, "ForceOpen", b.ForceOpen)
			call(t, b, "Allow of a forced-open breaker", func() { _, err = b.Allow() })
			if !errors.Is(err, ErrForcedOpen) {
				t.Fatalf("Allow of a forced-open breaker = %v, want ErrForcedOpen", err)
			}
			call(t, b, "ForceClosed", b.ForceClosed)
			call(t, b, "Reset", b.Reset)

			// A Reset between an open breaker's first look and its lock.
			call(t, b, "Record of a failure", func() { b.Record(true) })
			c.at(b.Reset)
			call(t, b, "Allow of a breaker reset while admitting", func() { p, err = b.Allow() })
			if err != nil {
				t.Fatalf("Allow across a Reset = %v, want admitted", err)
			}
			call(t, b, "Done of a failure", func() { p.Done(errLock) })
			state("a failure", Open)

			// A Reset between a failure's first look and its lock: only a
			// timed failure reads the clock before the lock.
			if b.timed {
				call(t, b, "Reset", b.Reset)
				call(t, b, "Allow of a closed breaker", func() { p, _ = b.Allow() })
				c.at(b.Reset)
				call(t, b, "Done of a failure of a generation reset while reporting", func() { p.Done(errLock) })
				var got Counts
				call(t, b, "Counts", func() { got = b.Counts() })
				if got != (Counts{}) {
					t.Fatalf("Counts() after a failure of a generation reset = %+v, want zero", got)
				}
			}
		})
	}
}
