// Package throttle is client-side adaptive throttling, after the Google
// SRE book ("Handling Overload"): a client that sees its dependency
// refuse or fail requests stops sending most of them and refuses them
// itself, at no cost to the dependency, in proportion to how much worse
// than 1 in K the dependency's answers are.
//
//	th := throttle.New(throttle.WithName("payments"))
//	p := throttle.Policy[*Receipt](th)
//	rc, err := p.Do(ctx, func(ctx context.Context) (*Receipt, error) { return pay(ctx, order) })
//
// Over a sliding window (two minutes by default) a [Throttler] counts the
// requests it sent and those the dependency accepted, and refuses a new
// request with probability
//
//	max(0, (requests − K × accepts) / (requests + 1))
//
// with K = 2 by default: while the dependency accepts at least half of
// what it gets, nothing is refused; when it fails everything, the client
// sends it a trickle (about √(2 × requests) per window), enough to see it
// recover, and each accepted request then lets K more through. Unlike a
// circuit breaker it has no states and no thresholds to tune: it sheds
// load in proportion to the failures, and it is meant for many clients
// of one backend, whose combined trickle the backend can take.
//
// # Entry points
//
//   - [New] creates a Throttler; [Option]s configure it: [WithK],
//     [WithWindow], [WithName], [WithObserver], [WithClock], [WithRandom],
//     [WithRand]. A
//     [Config] read at run time (it reads and writes JSON) is checked with
//     [Config.Validate] and given with [WithConfig], which sets its
//     non-zero fields only.
//   - [Throttler.Allow] lets a request through, or refuses it; the
//     [Permit] it returns reports the outcome with [Permit.Done].
//   - [Policy] makes a Throttler a layer of a resilience.Policy[T].
//   - [Throttler.Stats] reports the window's requests and accepts, the
//     probability of a refusal now and the refusals, for metrics;
//     [Throttler.Name] and [Throttler.Snapshot] (kind [Kind], with the
//     accept ratio) make the throttler a telemetry.Guard, for a
//     telemetry.Registry, the dashboard, the exporters and
//     resiliencehttp.Health.
//   - [WithObserver] reports each refusal as an event, [EventRefused]
//     ("throttle.refused"), which the exporters count as a call refused.
//
// # Defaults
//
//	option, field          default                      unit
//	WithK, K               2                            requests sent per accepted one
//	WithWindow, Window     2m (16 buckets of 7.5s)      time.Duration
//	WithName, Name         unnamed
//	WithObserver, Observer none (no events)
//	WithClock, Clock       clock.Real()
//	WithRandom, Random     math/rand/v2's Float64       in [0, 1)
//	WithRand, Random       (a seeded *rand.Rand, locked)
//
// # Errors
//
// A refusal is a *resilience.RefusedError carrying the throttler's name
// and no Retry-After hint; it matches [ErrThrottled] and
// resilience.ErrRefused through errors.Is. Invalid configuration panics
// in New with a message naming the field and the value;
// [Config.Validate] returns the same message as an error.
//
// # Cost
//
// Allow and Done are lock-free and allocate nothing: atomic adds and
// loads on the current bucket, and a draw of Random only while the
// probability is above 0. They never read the clock: the buckets turn on
// a timer of the throttler's clock, which runs while requests come.
package throttle
