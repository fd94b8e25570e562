// Package retry runs a failed call again after a backoff: a typed policy,
// with a retry budget shared per dependency.
//
//	p := retry.New[*Invoice](
//		retry.WithAttempts(4),
//		retry.WithMaxElapsed(5*time.Second),
//	)
//	inv, err := p.Do(ctx, func(ctx context.Context) (*Invoice, error) { return billing.Get(ctx, id) })
//
// # Entry points
//
//   - [New]: the policy, a resilience.Policy[T], configured by options:
//     [WithAttempts], [WithMaxElapsed], [WithBackoff], [WithMaxWait],
//     [WithMaxRefusalWait], [WithRetryIf], [WithOnRetry], [WithName], [WithObserver],
//     [WithClock], [WithBudget], [WithRand], [WithConfig].
//   - [Kind] and the event types [EventAttemptFailed], [EventWaiting],
//     [EventGaveUp], [EventAttempt], [EventCall]: what [WithObserver]
//     reports, and the fields of each.
//   - [Config], [Config.Validate]: the configuration as a value, for
//     configurations read at run time (JSON included); Config{} is the
//     default configuration.
//   - [Error]: what the policy returns when it gives up; its Reason says
//     why: [ErrAttempts], [ErrMaxElapsed], [ErrMaxWait],
//     [ErrBudgetExhausted], or the context's error (it ended, or its
//     deadline would pass during the next wait).
//   - [Budget], [NewBudget], [BudgetConfig]: a retry budget shared by the
//     retry policies of one dependency in one process; [Budgeter], what
//     [WithBudget] takes: a Budget, or a budget shared by a fleet
//     (resilienceredis.RetryBudget), or one of your own.
//
// # Defaults
//
// A zero [Config] field means its default; resilience.Off switches off the
// settings that are on by default and can be off: the limit on attempts,
// the cap on a single wait, the bound on waits for refusals. An option
// states its value: given 0 (or the zero Schedule), where 0 would silently
// mean the default, it panics naming the option and the value; leave the
// option out for the default.
//
//	option              default (not given)                    unit
//	WithAttempts        3 (calls in total; 1 = no retry;       calls
//	                    Off = no limit, needs WithMaxElapsed)
//	WithMaxElapsed      no bound                               time.Duration
//	WithBackoff         exponential: 100 ms, ×2, capped at     time.Duration
//	                    10 s, full jitter (delays uniform in
//	                    [0, d])
//	WithMaxWait         the larger of the Backoff's Max and    time.Duration
//	                    10 s (Off = no cap)
//	WithMaxRefusalWait  100 ms (Off = no bound but MaxWait)    time.Duration
//	WithRetryIf         nil: every error but the exceptions below
//	WithOnRetry         nil (no hook)
//	WithName            "" (no name; the layer is "retry")
//	WithObserver        nil (no events: retry.attempt_failed,
//	                    retry.waiting, retry.gave_up, and the
//	                    durations retry.attempt and retry.call;
//	                    see EventAttemptFailed, ...)
//	WithClock           clock.Real()
//	WithBudget          nil (no budget)
//	WithRand            the Backoff's own source (math/rand/v2's
//	                    top-level functions by default)
//
// Never retried, whatever the options: the caller's own context errors (a
// call whose context is already done returns ctx.Err() without running the
// op; the policy stops as soon as the caller's context is done, without
// waiting any further, and does not start a wait that would not end before
// the context's deadline) and errors marked resilience.Permanent. A server's
// hint, an error with a method RetryAfter() time.Duration (an HTTP 429 or
// 503 with a Retry-After header), makes the next wait at least that long;
// a hint longer than MaxWait, or that would pass MaxElapsed or the
// deadline, ends the execution at once, and a hint of resilience.Never
// ("never") comes back as it is. So a retry never sleeps longer than
// MaxWait at a time: 10 s by default.
//
// # Refusals fail fast
//
// Put the retry outside the breaker (retry > breaker > timeout, the order
// resilience.Then recommends) and each attempt is counted by the breaker;
// once it opens, its refusals (breaker.ErrOpen, an *resilience.RefusedError
// whose hint is the rest of the cooldown) end the retry at once: a refusal
// of an inner guard whose hint is longer than MaxRefusalWait (100 ms by
// default) comes back as it is, without a wait and whatever the attempts
// left, so callers fail fast while the breaker is open and the first call
// after the cooldown is its trial. A refusal with a short hint, such as a
// rate limiter's pushback of a few milliseconds, is waited for and retried;
// raise the bound with WithMaxRefusalWait to wait for longer pushback, or
// give resilience.Off to wait for every refusal as for any hint (up to
// MaxWait: the retry then waits out a cooldown that fits MaxWait and
// MaxElapsed). A refusal without a hint (a full bulkhead) is retried after
// the backoff.
//
// A policy is an immutable value, safe for simultaneous use by multiple
// goroutines; a [Budget] is shared, and safe for simultaneous use too.
package retry
