package timeout

import (
	"context"
	"runtime"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
)

// New returns a timeout policy, named "timeout(d)" (e.g. "timeout(2s)"): it
// runs the rest of the chain under a context whose deadline is d from now,
// on [Config.Clock], and returns:
//
//   - the op's result, if the op returns before the deadline, or returns no
//     error whenever it returns;
//   - on expiry, the op's value and an error matching [ErrTimeout] and
//     context.DeadlineExceeded, whose message says "timeout: call exceeded
//     2s"; if the op returned an error of its own, the error also wraps it
//     ("timeout: call exceeded 2s: 503 busy"), so errors.Is/As, a
//     retry.Permanent mark and a Retry-After hint still reach it (an op
//     error that is exactly context.DeadlineExceeded adds nothing and is
//     not kept);
//   - if the caller's context ends first (cancelled, or a deadline earlier
//     than d), the op's result as it is: the caller's error, not ErrTimeout.
//
// By default the policy waits for the op to return after cancelling its
// context at the deadline, so an op that ignores its context is not cut
// short. With [WithAbandon](true) it returns at the deadline (or when the
// caller's context ends) with the zero T: the op runs on in its own
// goroutine until it returns, then its result is dropped; nothing is
// leaked once it returns. A panic of such an op reaches the caller if it
// happens before the policy returned, and is dropped after.
//
// Cost: with the real clock a call allocates what context.WithTimeout does
// and nothing more, expiry included, unless the op returns an error of its
// own after the deadline: then one more allocation, the error that wraps
// it. WithAbandon adds a goroutine and a channel.
//
// New panics with the message of [Config.Validate] if the configuration is
// invalid: d <= 0 is not "no timeout". The policy is safe for simultaneous
// use by multiple goroutines.
func New[T any](d time.Duration, opts ...Option) resilience.Policy[T] {
	c := Config{Duration: d}
	for _, o := range opts {
		o.apply(&c)
	}
	if err := c.Validate(); err != nil {
		panic(err.Error())
	}
	expired := &expiredError{d: c.Duration}
	realClock := c.Clock == nil || c.Clock == clock.Real()
	return resilience.New("timeout("+c.Duration.String()+")", func(ctx context.Context, next resilience.Next[T]) (T, error) {
		var tctx context.Context
		var cancel context.CancelFunc
		if realClock {
			tctx, cancel = context.WithTimeoutCause(ctx, c.Duration, expired)
		} else {
			tctx, cancel = withClockTimeout(ctx, c.Clock, c.Duration, expired)
		}
		defer cancel()
		if c.Abandon {
			return abandonable(tctx, next, expired)
		}
		v, err := next.Call(tctx)
		if err != nil && context.Cause(tctx) == expired {
			return v, expiredWith(expired, err)
		}
		return v, err
	})
}

// outcome is what an abandonable op's goroutine hands back.
type outcome[T any] struct {
	v        T
	err      error
	panicked bool
	panicVal any // nil with panicked: the op called runtime.Goexit
}

// abandonable runs next in a goroutine of its own and returns its result,
// or returns at once when tctx ends.
func abandonable[T any](tctx context.Context, next resilience.Next[T], expired *expiredError) (T, error) {
	ch := make(chan outcome[T], 1) // the goroutine never blocks on it
	go func() {
		var o outcome[T]
		defer func() {
			if o.panicked {
				o.panicVal = recover()
			}
			ch <- o
		}()
		o.panicked = true
		o.v, o.err = next.Call(tctx)
		o.panicked = false
	}()
	var o outcome[T]
	select {
	case o = <-ch:
	case <-tctx.Done():
		select {
		case o = <-ch: // the op has returned already: keep its result
		default:
			var zero T
			if context.Cause(tctx) == expired {
				return zero, expired
			}
			return zero, tctx.Err()
		}
	}
	switch {
	case o.panicked && o.panicVal == nil:
		runtime.Goexit()
	case o.panicked:
		panic(o.panicVal)
	case o.err != nil && context.Cause(tctx) == expired:
		return o.v, expiredWith(expired, o.err)
	}
	return o.v, o.err
}

// withClockTimeout is context.WithTimeoutCause on clk: the returned
// context's Deadline is d from clk.Now(), and at that time on clk it ends
// with Err() context.DeadlineExceeded and cause expired.
func withClockTimeout(parent context.Context, clk clock.Clock, d time.Duration, expired error) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancelCause(parent)
	t := clk.AfterFunc(d, func() { cancel(expired) })
	ctx := &clockCtx{Context: cctx, deadline: clk.Now().Add(d), expired: expired}
	return ctx, func() {
		t.Stop()
		cancel(nil)
	}
}

// clockCtx reports the deadline and error of a timeout on a clock other
// than the real one. Contexts derived from it see it as cancelled, with
// cause expired (which matches context.DeadlineExceeded).
type clockCtx struct {
	context.Context
	deadline time.Time
	expired  error
}

func (c *clockCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *clockCtx) Err() error {
	err := c.Context.Err()
	if err != nil && context.Cause(c.Context) == c.expired {
		return context.DeadlineExceeded
	}
	return err
}
