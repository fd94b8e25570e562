// Package hedge races a second copy of a slow call (hedged requests): a
// typed policy that cuts the tail of a dependency's latency.
//
//	p := hedge.New[*Profile](50 * time.Millisecond)
//	prof, err := p.Do(ctx, func(ctx context.Context) (*Profile, error) { return users.Get(ctx, id) })
//
// If the call has no result after the delay, a second attempt starts; the
// first accepted result wins and the other attempts are cancelled. Set the
// delay near the dependency's 95th-percentile latency, so that about one call
// in twenty is hedged, or let the policy find it ([WithQuantile]: the
// delay follows a percentile of its own attempts' latencies), and cap the
// extra load with a budget ([WithBudget]). Hedge only calls that are safe
// to repeat.
//
// A failed attempt starts the next one at once, but a hedge is no retry: a
// refusal of an inner guard (an open breaker, a full bulkhead) starts no
// more attempts, and a Retry-After hint holds the next one for at most
// MaxWait (by default the delay); a longer hint starts no more. Either way
// the call returns as soon as no attempt runs, and a retry outside the
// hedge decides whether to wait.
//
// # Entry points
//
//   - [New]: the policy, a resilience.Policy[T], for a delay > 0, configured
//     by options: [WithMaxHedges], [WithMaxWait], [WithQuantile],
//     [WithMinDelay], [WithMaxDelay], [WithBudget], [WithAccept], [WithClock], [WithName], [WithObserver],
//     [WithConfig].
//   - [Kind], [EventLaunched], [EventWon], [EventLosersCancelled]: the
//     kind and the event types of what [WithObserver] reports, and the
//     fields of each.
//   - [Config], [Config.Validate]: the configuration as a value, for
//     configurations read at run time; it reads and writes JSON.
//
// # Defaults
//
// A zero Config field means the default; an option states its value, and
// given 0 (where 0 would silently mean the default or "none") it panics
// naming the option and the value: leave the option out for the default.
//
//	option, field               default                            unit
//	(delay), Delay              New's argument, > 0                time.Duration
//	WithMaxHedges, MaxHedges    1 (at most 2 attempts per call);   attempts
//	                            at most MaxHedgesLimit, 10
//	WithMaxWait, MaxWait        the Delay; Off: no cap             time.Duration
//	WithQuantile, Quantile      0: a fixed delay                   in (0, 1)
//	WithMinDelay, MinDelay      0: no lower bound                  time.Duration
//	WithMaxDelay, MaxDelay      0: no upper bound (Off: none)      time.Duration
//	WithBudget, Budget          0: no budget                       hedges per call
//	WithAccept, Accept          nil: accept a result iff its error is nil
//	WithClock, Clock            clock.Real()
//	WithName, Name              "": no name in the policy's events
//	WithObserver, Observer      nil: no events, at no cost
//
// [WithConfig] sets the fields of its Config that are not zero, so it never
// erases New's delay, an earlier option or a default: Config.Delay 0 keeps
// New's delay.
//
// The options [WithAccept] and [WithConfig] carry the result type T (it is
// inferred from their argument): given to a New of another T, they make New
// panic, naming both types. The others go to a New of any T.
//
// A policy is a value safe for simultaneous use by multiple goroutines;
// its calls share its quantile estimator and its budget, if it has them
// (a policy value and its copies are one policy: build one per
// dependency).
//
// # Events
//
// With an observer ([WithObserver], see package telemetry) a call that
// hedges reports hedge.launched as each hedge starts (Attempt 2 for the
// first hedge; Elapsed since the first attempt started), hedge.won when an
// attempt's result is accepted (Attempt: that attempt, 1 for the first;
// Elapsed since the first attempt started) and, if attempts were still
// running then, hedge.losers_cancelled (Attempt: how many were cancelled).
// Every event carries the policy's Name. A call that starts no hedge
// reports nothing, nor does one whose attempts all fail (but for its
// launches). The events of a call come one at a time and in the order they
// happened, from the goroutine that caused them (the caller's, the delay
// timer's or an attempt's), never with the call's lock held, and all of
// them before Do returns; an observer that blocks holds up the call. A
// panic of the observer reaches the caller once every attempt has
// returned (an attempt's own panic goes first).
//
// # Hedging at a quantile
//
// With WithQuantile(q), the delay is the q-quantile of the latencies of
// the policy's last 1024 attempts, between WithMinDelay and WithMaxDelay: the
// "Tail at Scale" rule of hedging at about the 95th percentile, kept true
// as the dependency changes. The estimate is exact over that window (a
// selection over a fixed ring of 1024 latencies, 16 KiB per policy with
// the room to select in, redone every 32 attempts, lock-free for the
// attempts that record), and until 100 attempts have been measured the
// delay is New's. A hedge at p95
// cuts the tail at the price of about 5% more calls; a budget bounds that
// price when the dependency slows down for everyone, which is when every
// call would otherwise be hedged.
package hedge
