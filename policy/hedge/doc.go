// Package hedge races a second copy of a slow call (hedged requests): a
// typed policy that cuts the tail of a dependency's latency.
//
//	p := hedge.New[*Profile](50 * time.Millisecond)
//	prof, err := p.Do(ctx, func(ctx context.Context) (*Profile, error) { return users.Get(ctx, id) })
//
// If the call has no result after the delay, a second attempt starts; the
// first accepted result wins and the other attempts are cancelled. Set the
// delay near the dependency's 95th-percentile latency, so that about one call
// in twenty is hedged. Hedge only calls that are safe to repeat.
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
//     by options: [WithMaxHedges], [WithMaxWait], [WithAccept], [WithClock],
//     [WithConfig].
//   - [Config], [Config.Validate]: the configuration as a value, for
//     configurations read at run time; it reads and writes JSON.
//
// # Defaults
//
// A zero value, in an option or a Config field, means the default:
//
//	option, field               default                            unit
//	(delay), Delay              New's argument, > 0                time.Duration
//	WithMaxHedges, MaxHedges    1 (at most 2 attempts per call)    attempts
//	WithMaxWait, MaxWait        the Delay; Off: no cap             time.Duration
//	WithAccept, Accept          nil: accept a result iff its error is nil
//	WithClock, Clock            clock.Real()
//
// [WithConfig] sets the fields of its Config that are not zero, so it never
// erases New's delay, an earlier option or a default: Config.Delay 0 keeps
// New's delay.
//
// The options [WithAccept] and [WithConfig] carry the result type T (it is
// inferred from their argument): each is an [Option][T], and giving one to
// a New of another T does not compile. The others are an [AnyOption], an
// Option[T] for every T.
//
// A policy is an immutable value, safe for simultaneous use by multiple
// goroutines.
package hedge
