package clock

import (
	"context"
	"time"
)

// Clock is what policies need from time. Implementations are safe for
// simultaneous use by multiple goroutines.
type Clock interface {
	// Now returns the current time.
	Now() time.Time

	// NewTimer is like [time.NewTimer]: it returns a Timer that sends the
	// time on its channel C() once at least d has elapsed. A d <= 0 fires
	// at once.
	NewTimer(d time.Duration) Timer

	// AfterFunc is like [time.AfterFunc]: it calls f once at least d has
	// elapsed. C() of the returned Timer is nil. It panics if f is nil.
	AfterFunc(d time.Duration, f func()) Timer

	// Sleep blocks for d or until ctx is done, whichever comes first. It
	// returns nil after d, or ctx.Err() if ctx ended first. If d <= 0 it
	// returns ctx.Err() at once (nil when ctx is live). If ctx is already
	// done it returns ctx.Err() without waiting.
	Sleep(ctx context.Context, d time.Duration) error
}

// Timer is a single event created by [Clock.NewTimer] or [Clock.AfterFunc].
// Its methods follow [time.Timer] with Go 1.23+ semantics: after Stop or
// Reset returns, no value sent before the call is received from C(). A
// Timer is safe for simultaneous use by multiple goroutines.
type Timer interface {
	// C returns the channel on which the time is delivered when the timer
	// fires. It is nil for timers created by AfterFunc.
	C() <-chan time.Time

	// Stop prevents the timer from firing. It returns true if the call
	// stopped the timer, false if the timer had already fired (and its
	// value, if any, was received) or been stopped. Stop does not wait for
	// an AfterFunc callback that has already started.
	Stop() bool

	// Reset changes the timer to fire after duration d, re-arming it if it
	// had fired or been stopped. It returns true if the timer was active
	// (as Stop would have reported), false otherwise.
	Reset(d time.Duration) bool
}

// Real returns the Clock backed by the time package. The result is a
// package-level singleton; calling Real does not allocate. It is safe for
// simultaneous use by multiple goroutines.
func Real() Clock { return realSingleton }

var realSingleton Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer {
	return realTimer{time.NewTimer(d)}
}

func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	if f == nil {
		panic("clock: AfterFunc with nil func")
	}
	return realTimer{time.AfterFunc(d, f)}
}

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil || d <= 0 {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }
