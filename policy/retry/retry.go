package retry

import (
	"context"
	"errors"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/telemetry"
)

// New returns a retry policy, named "retry" (or "retry(name)" with
// [WithName]): it calls the rest of the chain
// and, while the call fails with an error worth retrying, waits and calls it
// again, as the options say (see [Config] for each one and its default).
//
// One execution (a call of Do) goes as follows. If ctx is already done
// when it starts, it returns ctx.Err() at once, as it is: no attempt runs,
// and nothing is deposited in the budget. After a failed attempt:
//
//  1. If the error is marked resilience.Permanent, or [Config.RetryIf]
//     rejects it, or its Retry-After hint (see resilience.RetryAfter) is
//     resilience.Never (a rate limiter of rate 0 refuses so), or it is an
//     inner guard's refusal (it matches resilience.ErrRefused) whose hint
//     is longer than [Config.MaxRefusalWait] (an open breaker's rest of
//     the cooldown), return it as it is: no retry could help soon, so the
//     policy adds nothing, whatever the state of the caller's context.
//  2. If the caller's context is done, stop: the error matches both the
//     context's error and the attempt's error.
//  3. If the attempts are used up, stop with an [Error] matching
//     [ErrAttempts].
//  4. If the error's Retry-After hint is longer than [Config.MaxWait],
//     stop at once with an [Error] matching [ErrMaxWait]. Else the wait is
//     the next delay of [Config.Backoff] (cut to MaxWait), or the hint if
//     that is longer. If the wait would end past [Config.MaxElapsed] (or
//     MaxElapsed is already used up), stop at once with an [Error]
//     matching [ErrMaxElapsed]. If it would not end before the context's
//     deadline (compared with [Config.Clock]'s time), stop at once with an
//     [Error] matching context.DeadlineExceeded: sleeping into the
//     deadline would only delay the same outcome.
//  5. If the budget ([Config.Budget]) denies the retry, stop with an [Error] that matches
//     [ErrBudgetExhausted].
//  6. Call [Config.OnRetry] (and report the wait to [Config.Observer]), wait on [Config.Clock] (a wait ends early when
//     the context ends, as in step 2), and make the next attempt.
//
// When the policy gives up, it returns the last attempt's result along with
// the error; [Error.Reason] says which step stopped the execution. A
// refusal of an inner guard (an error matching resilience.ErrRefused)
// fails fast: one whose hint is longer than MaxRefusalWait (100 ms by
// default: an open breaker's cooldown, a full trial set) comes back at
// once, as it is; one with a shorter hint (a rate limiter's pushback) is
// retried after at least that hint, and one with no hint (a full
// bulkhead) after the backoff, as any other error. [WithMaxRefusalWait]
// changes the bound, [WithRetryIf] can reject refusals altogether. A panic
// in the op is not retried: it goes on up to the caller.
//
// An execution whose first attempt succeeds costs no allocation and reads
// no clock unless MaxElapsed or a Budget is set (then one clock reading),
// or an Observer (then two, for the durations of the attempt and the call
// it reports).
// Giving up allocates the returned Error.
//
// New panics if an option is nil, and with the message of [Config.Validate]
// if the configuration is invalid. The policy is safe for simultaneous use
// by multiple goroutines if its hooks are.
func New[T any](opts ...Option) resilience.Policy[T] {
	var c Config
	for _, o := range opts {
		if o == nil {
			panic("retry: New option must not be nil")
		}
		o.apply(&c)
	}
	if err := c.Validate(); err != nil {
		panic(err.Error())
	}
	c = c.resolved()
	layer := "retry"
	if c.Name != "" {
		layer = "retry(" + c.Name + ")"
	}
	return describe(c, resilience.New(layer, func(ctx context.Context, next resilience.Next[T]) (v T, err error) {
		if err = ctx.Err(); err != nil {
			return v, err // the caller gave up: nothing runs, nothing is deposited
		}
		if c.Budget != nil {
			c.Budget.Deposit()
		}
		if c.Observer != nil {
			return observed(ctx, next, &c)
		}
		var start time.Time
		if c.MaxElapsed > 0 {
			start = c.Clock.Now()
		}
		if v, err = next.Call(ctx); err == nil {
			return v, nil
		}
		return retryAfterFailure(ctx, next, &c, start, v, err)
	}))
}

// observed is an execution with an Observer: as [New]'s, and it reports
// the duration of the call (EventCall) and of each attempt
// (EventAttempt), from two readings of c.Clock per attempt (a
// call whose first attempt succeeds: two in all). A panic in the op goes
// up without them.
func observed[T any](ctx context.Context, next resilience.Next[T], c *Config) (v T, err error) {
	start := c.Clock.Now()
	v, err = next.Call(ctx)
	end := c.Clock.Now() // a first attempt that succeeds ends the call: two readings in all
	c.Observer.Observe(telemetry.Event{Type: EventAttempt, Name: c.Name, Attempt: 1, Err: err, Elapsed: end.Sub(start)})
	if err != nil {
		v, err = retryAfterFailure(ctx, next, c, start, v, err)
		end = c.Clock.Now()
	}
	c.Observer.Observe(telemetry.Event{Type: EventCall, Name: c.Name, Err: err, Elapsed: end.Sub(start)})
	return v, err
}

// makeAttempt makes attempt number n, reporting its duration to c.Observer
// if there is one.
func makeAttempt[T any](ctx context.Context, next resilience.Next[T], c *Config, n int) (T, error) {
	if c.Observer == nil {
		return next.Call(ctx)
	}
	start := c.Clock.Now()
	v, err := next.Call(ctx)
	c.Observer.Observe(telemetry.Event{Type: EventAttempt, Name: c.Name, Attempt: n, Err: err, Elapsed: c.Clock.Now().Sub(start)})
	return v, err
}

// retryAfterFailure goes on with an execution whose first attempt returned
// (v, err), err != nil, as [New] describes.
func retryAfterFailure[T any](ctx context.Context, next resilience.Next[T], c *Config, start time.Time, v T, err error) (T, error) {
	var seq backoff.Sequence
	for attempt := 1; ; attempt++ {
		c.observe(EventAttemptFailed, attempt, err, 0)
		if resilience.IsPermanent(err) || (c.RetryIf != nil && !c.RetryIf(err)) {
			return v, err
		}
		hint, hinted := resilience.RetryAfter(err)
		if hint == resilience.Never || hinted && hint > c.MaxRefusalWait && errors.Is(err, resilience.ErrRefused) {
			return v, err
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return v, c.giveUp(&Error{Attempts: attempt, Err: err, Reason: ctxErr})
		}
		if attempt == c.Attempts {
			return v, c.giveUp(&Error{Attempts: attempt, Err: err, Reason: ErrAttempts})
		}
		if attempt == 1 {
			seq = c.Backoff.Start()
		}
		if hinted && hint > c.MaxWait {
			return v, c.giveUp(&Error{Attempts: attempt, Err: err, Reason: ErrMaxWait, wait: hint, limit: c.MaxWait})
		}
		wait := min(seq.Next(), c.MaxWait)
		if hinted {
			wait = max(wait, hint)
		}
		if gaveUp := fits(ctx, c, start, wait); gaveUp != nil {
			gaveUp.Attempts, gaveUp.Err = attempt, err
			return v, c.giveUp(gaveUp)
		}
		if c.Budget != nil && !c.Budget.Withdraw() {
			return v, c.giveUp(&Error{Attempts: attempt, Err: err, Reason: ErrBudgetExhausted})
		}
		if c.OnRetry != nil {
			c.OnRetry(attempt, err, wait)
		}
		c.observe(EventWaiting, attempt, err, wait)
		if ctxErr := c.Clock.Sleep(ctx, wait); ctxErr != nil {
			return v, c.giveUp(&Error{Attempts: attempt, Err: err, Reason: ctxErr})
		}
		if v, err = makeAttempt(ctx, next, c, attempt+1); err == nil {
			return v, nil
		}
	}
}

// observe reports an event of type t to the observer, if there is one.
func (c *Config) observe(t telemetry.Type, attempt int, err error, wait time.Duration) {
	if c.Observer != nil {
		c.Observer.Observe(telemetry.Event{Type: t, Name: c.Name, Attempt: attempt, Err: err, Wait: wait})
	}
}

// giveUp reports that the policy gives up with e, and returns e.
func (c *Config) giveUp(e *Error) *Error {
	c.observe(EventGaveUp, e.Attempts, e.Reason, 0)
	return e
}

// fits returns nil if a wait starting now ends within MaxElapsed of start
// (when MaxElapsed is set) and before ctx's deadline (when it has one), on
// c.Clock; else the Error to give up with, without Attempts and Err.
func fits(ctx context.Context, c *Config, start time.Time, wait time.Duration) *Error {
	deadline, hasDeadline := ctx.Deadline()
	if c.MaxElapsed <= 0 && !hasDeadline {
		return nil
	}
	now := c.Clock.Now()
	if c.MaxElapsed > 0 {
		used := max(now.Sub(start), 0)
		if wait > c.MaxElapsed-used {
			return &Error{Reason: ErrMaxElapsed, wait: wait, limit: c.MaxElapsed, used: used}
		}
	}
	// A wait that ends at the deadline leaves the next attempt no time.
	if left := deadline.Sub(now); hasDeadline && wait >= left {
		return &Error{Reason: context.DeadlineExceeded, wait: wait, limit: left, ahead: true}
	}
	return nil
}
