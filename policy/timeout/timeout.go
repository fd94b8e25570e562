package timeout

import (
	"context"
	"runtime"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/telemetry"
)

// New returns a timeout policy, named "timeout(d)" (e.g. "timeout(2s)"): it
// runs the rest of the chain under a context whose deadline is d from now,
// on [Config.Clock], and returns:
//
//   - ctx.Err(), at once, if the caller's context is already done when the
//     call arrives: the op is not run and no timer is set;
//   - the op's result, if the op returns before the deadline, or returns no
//     error whenever it returns;
//   - on expiry, the op's value and an error matching [ErrTimeout] and
//     context.DeadlineExceeded, whose message says "timeout: call exceeded
//     2s"; if the op returned an error of its own, the error also wraps it
//     ("timeout: call exceeded 2s: 503 busy"), so errors.Is/As, a
//     resilience.Permanent mark and a Retry-After hint still reach it (an op
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
// happens before the policy returned, and is dropped after. The panic
// reaches the caller as a new panic with the same value, raised on the
// caller's goroutine: its stack trace shows the policy, not the op's
// frames where the panic began (recover in the op if you need those).
// runtime.Goexit in the op ends the caller's goroutine too.
//
// With [WithObserver], the policy reports timeout.expired (Elapsed: its
// duration) when a call returns an error matching ErrTimeout, and, with
// WithAbandon, timeout.abandoned (Elapsed: its duration) when it returns
// while the op runs on: after timeout.expired at the deadline, alone when
// the caller's context ended first. A call that returns in time, or
// returns no error after the deadline, reports nothing. Events are
// delivered on the caller's goroutine before Do returns.
//
// Cost: with the real clock a call allocates what context.WithTimeout does
// and nothing more, expiry included, unless the op returns an error of its
// own after the deadline: then one more allocation, the error that wraps
// it. WithAbandon adds three allocations per call (a channel, the closure
// of the goroutine that runs the op, and the record of the op's result,
// which holds a T) and a goroutine, whose memory the runtime reuses once it
// ends: an abandoned op keeps its goroutine and stack until it returns.
// With no observer, reporting costs nothing; an observer adds no
// allocation of the policy's (the Event is passed by value).
//
// New panics if an option is nil, if d <= 0 (and no [WithConfig] replaced
// it: d <= 0 is not "no timeout"), and with the message of
// [Config.Validate] if the configuration is invalid. The policy is safe for
// simultaneous use by multiple goroutines.
func New[T any](d time.Duration, opts ...Option) resilience.Policy[T] {
	c := configure(d, opts)
	expired := &expiredError{d: c.Duration}
	obs := observer{o: c.Observer, name: c.Name, d: c.Duration}
	realClock := c.Clock == nil || c.Clock == clock.Real()
	return describe(c, resilience.New("timeout("+c.Duration.String()+")", func(ctx context.Context, next resilience.Next[T]) (v T, err error) {
		if err = ctx.Err(); err != nil {
			return v, err // the caller gave up: no timer, nothing runs
		}
		var tctx context.Context
		var cancel context.CancelFunc
		if realClock {
			tctx, cancel = context.WithTimeoutCause(ctx, c.Duration, expired)
		} else {
			tctx, cancel = withClockTimeout(ctx, c.Clock, c.Duration, expired)
		}
		defer cancel()
		if c.Abandon {
			return abandonable(tctx, next, expired, obs)
		}
		v, err = next.Call(tctx)
		if err != nil && context.Cause(tctx) == expired {
			obs.observe(EventExpired)
			return v, expiredWith(expired, err)
		}
		return v, err
	}))
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
func abandonable[T any](tctx context.Context, next resilience.Next[T], expired *expiredError, obs observer) (T, error) {
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
				obs.observe(EventExpired)
				obs.observe(EventAbandoned)
				return zero, expired
			}
			obs.observe(EventAbandoned)
			return zero, tctx.Err()
		}
	}
	switch {
	case o.panicked && o.panicVal == nil:
		runtime.Goexit()
	case o.panicked:
		panic(o.panicVal)
	case o.err != nil && context.Cause(tctx) == expired:
		obs.observe(EventExpired)
		return o.v, expiredWith(expired, o.err)
	}
	return o.v, o.err
}

// observer reports a policy's events to its Config.Observer, if it has one.
type observer struct {
	o    telemetry.Observer
	name string
	d    time.Duration
}

// observe reports an event of type t; both timeout events carry the
// policy's duration as Elapsed.
func (ob observer) observe(t telemetry.Type) {
	if ob.o != nil {
		ob.o.Observe(telemetry.Event{Type: t, Name: ob.name, Elapsed: ob.d})
	}
}

// withClockTimeout is context.WithTimeoutCause on clk: the returned
// context's Deadline is the earlier of parent's and d from clk.Now(), and
// at d on clk it ends with Err() context.DeadlineExceeded and cause
// expired, as do the contexts derived from it.
func withClockTimeout(parent context.Context, clk clock.Clock, d time.Duration, expired error) (context.Context, context.CancelFunc) {
	deadline := clk.Now().Add(d)
	if pd, ok := parent.Deadline(); ok && pd.Before(deadline) {
		deadline = pd
	}
	cctx, cancel := context.WithCancelCause(parent)
	done, cancelDone := context.WithCancel(cctx)
	t := clk.AfterFunc(d, func() { cancel(expired) })
	ctx := &clockCtx{Context: cctx, done: done, deadline: deadline, expired: expired}
	return ctx, func() {
		t.Stop()
		cancel(nil)
		cancelDone()
	}
}

// clockCtx is the context of a timeout on a clock other than the real one.
//
// The embedded context (a context.WithCancelCause of the parent) gives
// Value, so context.Cause(ctx) is expired once the timeout fired. Done is
// the channel of done, a child of the embedded context, which it closes as
// it ends: the context package then does not take clockCtx for one of its
// own cancel contexts (those share their parent's error with their
// children directly, and would pass on context.Canceled); it hands each
// derived context clockCtx's own Err(), context.DeadlineExceeded on expiry.
// AfterFunc lets it do so without a goroutine per derived context.
type clockCtx struct {
	context.Context
	done     context.Context
	deadline time.Time
	expired  error
}

func (c *clockCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *clockCtx) Done() <-chan struct{} { return c.done.Done() }

func (c *clockCtx) Err() error {
	err := c.done.Err()
	if err != nil && context.Cause(c.done) == c.expired {
		return context.DeadlineExceeded
	}
	return err
}

// AfterFunc is what context.AfterFunc and the contexts derived from c use
// to learn that c ended: f runs in its own goroutine once c is done.
func (c *clockCtx) AfterFunc(f func()) (stop func() bool) { return context.AfterFunc(c.done, f) }
