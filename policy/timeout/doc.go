// Package timeout bounds how long one call may take: a typed policy.
//
//	p := timeout.New[*Quote](2 * time.Second)
//	q, err := p.Do(ctx, func(ctx context.Context) (*Quote, error) { return pricing.Quote(ctx, sku) })
//	if errors.Is(err, timeout.ErrTimeout) { ... } // "timeout: call exceeded 2s"
//
// Put the timeout innermost in a chain (inside retry and breaker), so that
// each attempt is bounded, counted as a failure by the breaker when it runs
// out of time, and retried; put another outside the retry to bound the whole
// call.
//
// # Entry points
//
//   - [New]: the policy, a resilience.Policy[T], for a duration d > 0,
//     configured by options: [WithAbandon], [WithClock], [WithName],
//     [WithObserver], [WithConfig].
//   - [Kind], [EventExpired], [EventAbandoned]: the kind and the event
//     types of what [WithObserver] reports, and the fields of each.
//   - [Config], [Config.Validate]: the configuration as a value, for
//     configurations read at run time; it reads and writes JSON.
//   - [ErrTimeout]: matched by the error of a call that ran out of time;
//     it also matches context.DeadlineExceeded.
//
// # Defaults
//
// A zero value, in an option or a Config field, means the default:
//
//	option, field            default                                   unit
//	(d), Duration            New's argument, > 0                       time.Duration
//	WithAbandon, Abandon     false: cancel the op's context at the
//	                         deadline, and wait for the op to return
//	WithClock, Clock         clock.Real()
//	WithName, Name           "": no name in the policy's events
//	WithObserver, Observer   nil: no events, at no cost
//
// [WithConfig] sets the fields of its Config that are not zero, so it never
// erases New's duration or an earlier option: Config.Duration 0 keeps New's
// duration.
//
// The caller's own cancellation, or a deadline of the caller's that comes
// before d, surfaces as the caller's error, never as ErrTimeout: a timeout
// reports only the time it imposed itself. A call whose context is already
// done returns ctx.Err() without running the op.
//
// # Events
//
// With an observer ([WithObserver], see package telemetry) the policy
// reports timeout.expired ([EventExpired]) when a call returns ErrTimeout
// and, with WithAbandon, timeout.abandoned ([EventAbandoned]) when it returns while the op runs on; both
// carry the policy's Name and its duration as Elapsed. A call that returns
// in time reports nothing.
//
// A policy is an immutable value, safe for simultaneous use by multiple
// goroutines.
package timeout
