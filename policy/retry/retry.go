package retry

import (
	"context"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
)

// New returns a retry policy, named "retry": it calls the rest of the chain
// and, while the call fails with an error worth retrying, waits and calls it
// again, as the options say (see [Config] for each one and its default).
//
// One execution (a call of Do) goes as follows. After a failed attempt:
//
//  1. If the caller's context is done, stop: the error matches both the
//     context's error and the attempt's error.
//  2. If the error is marked [Permanent], or [Config.RetryIf] rejects it,
//     return it as it is.
//  3. If the attempts are used up, stop with an [Error].
//  4. The wait is the next delay of [Config.Backoff], or the error's
//     Retry-After hint (see resilience.RetryAfter) if that is longer. If
//     the wait would end past [Config.MaxElapsed], stop at once with an
//     [Error] instead of waiting.
//  5. If the [Budget] denies the retry, stop with an [Error] that matches
//     [ErrBudgetExhausted].
//  6. Call [Config.OnRetry], wait on [Config.Clock] (a wait ends early when
//     the context ends, as in step 1), and make the next attempt.
//
// When the policy gives up, it returns the last attempt's result along with
// the error. A refusal of an inner guard (an error matching
// resilience.ErrRefused, such as an open breaker) is an error like any
// other: it is retried, after at least its Retry-After hint, within
// MaxElapsed; use [WithRetryIf] to treat refusals otherwise. A panic in the
// op is not retried: it goes on up to the caller.
//
// An execution whose first attempt succeeds costs no allocation and reads
// no clock unless MaxElapsed or a Budget is set (then one clock reading).
//
// New panics with the message of [Config.Validate] if the configuration is
// invalid. The policy is safe for simultaneous use by multiple goroutines if
// its hooks and backoff's random source are.
func New[T any](opts ...Option) resilience.Policy[T] {
	c := DefaultConfig()
	for _, o := range opts {
		o.apply(&c)
	}
	if err := c.Validate(); err != nil {
		panic(err.Error())
	}
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	return resilience.New("retry", func(ctx context.Context, next resilience.Next[T]) (T, error) {
		if c.Budget != nil {
			c.Budget.deposit()
		}
		var start time.Time
		if c.MaxElapsed > 0 {
			start = c.Clock.Now()
		}
		v, err := next.Call(ctx)
		if err == nil {
			return v, nil
		}
		return retryAfterFailure(ctx, next, &c, start, v, err)
	})
}

// retryAfterFailure goes on with an execution whose first attempt returned
// (v, err), err != nil, as [New] describes.
func retryAfterFailure[T any](ctx context.Context, next resilience.Next[T], c *Config, start time.Time, v T, err error) (T, error) {
	var seq backoff.Sequence
	for attempt := 1; ; attempt++ {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return v, &Error{Attempts: attempt, Err: err, reason: ctxErr}
		}
		if isPermanent(err) || (c.RetryIf != nil && !c.RetryIf(err)) {
			return v, err
		}
		if attempt == c.Attempts {
			return v, &Error{Attempts: attempt, Err: err}
		}
		if attempt == 1 {
			seq = c.Backoff.Start()
		}
		wait := seq.Next()
		if hint, ok := resilience.RetryAfter(err); ok {
			wait = max(wait, hint)
		}
		if c.MaxElapsed > 0 && wait > c.MaxElapsed-max(c.Clock.Now().Sub(start), 0) {
			return v, &Error{Attempts: attempt, Err: err, wait: wait, elapsed: c.MaxElapsed}
		}
		if c.Budget != nil && !c.Budget.withdraw() {
			return v, &Error{Attempts: attempt, Err: err, reason: ErrBudgetExhausted}
		}
		if c.OnRetry != nil {
			c.OnRetry(attempt, err, wait)
		}
		if ctxErr := c.Clock.Sleep(ctx, wait); ctxErr != nil {
			return v, &Error{Attempts: attempt, Err: err, reason: ctxErr}
		}
		if v, err = next.Call(ctx); err == nil {
			return v, nil
		}
	}
}
