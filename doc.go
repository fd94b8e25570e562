// Package resilience lets a service call dependencies that fail, hang or
// overload without going down with them.
//
// Every policy is a [Policy][T]: a value that an [Op][T] runs through.
// Policies compose with [Policy.Then] (or the function [Then]) and
// [Policy.Fallback]; the zero Policy is the identity. A pipeline is composed
// once and then called with [Policy.Do] or through [Policy.Wrap], at no
// allocation of its own per call.
//
// The policies live in sub-packages:
//
//   - policy/breaker: circuit breaker (closed, open, half-open), a shared
//     guard; a breaker per key (Keyed)
//   - policy/bulkhead: bounded concurrency with an optional queue, a shared guard
//   - policy/ratelimit: token bucket rate limiter (GCRA), a shared guard; a
//     bucket per key (Keyed)
//   - policy/adaptive: an adaptive concurrency limit (Gradient2, Vegas,
//     AIMD), a shared guard
//   - policy/throttle: client-side throttling (Google SRE book), a shared guard
//   - policy/retry: retries with backoff and a retry budget
//   - policy/timeout: a deadline for each call
//   - policy/hedge: hedged requests, with a delay at a latency quantile
//   - policy/chaos: fault, latency and result injection at a rate
//   - policy/cache: a read-through cache by key, with coalesced misses,
//     stale-while-revalidate, stale-if-error and negative caching
//
// Guards (breaker, bulkhead, rate limiter, adaptive limiter, throttler) are
// untyped and shared per dependency; each has an adapter that makes it a
// Policy[T] for any T. Time comes from package clock, delay schedules from
// package backoff. What the policies do is reported through package
// telemetry: events to an observer given with each policy's WithObserver
// (a fallback's: [WithFallbackObserver]), guards' live Stats, and a
// registry of guards and pipelines for exporters and health checks.
//
// The other packages of this module:
//
//   - clock: the time source, Real and Fake (for tests)
//   - backoff: delay schedules (constant, linear, exponential) and jitter
//   - telemetry: events, observers (Counter, Slog), snapshots, Registry
//   - pipeline: pipelines and shared guards from a JSON document, reloaded
//     live with the guards' state kept
//   - dashboard: a live page of a Registry's guards and pipelines
//   - resiliencehttp: Transport, Middleware, HostBreaker, Health for net/http
//   - resiliencetest: the fault kit for testing pipelines
//   - sim: a deterministic simulator of clients calling a server through
//     real pipelines
//
// Modules of their own, released with this one at the same version, so
// that this module depends on the standard library only:
//
//   - github.com/f0b5b96b/resilience/resiliencegrpc: gRPC interceptors
//   - github.com/f0b5b96b/resilience/resilienceotel: OpenTelemetry metrics
//   - github.com/f0b5b96b/resilience/resilienceprom: Prometheus metrics
//   - github.com/f0b5b96b/resilience/resilienceredis: a breaker and rate
//     limiters shared by a fleet through Redis
//   - github.com/f0b5b96b/resilience/resiliencetest/rapidgen: rapid
//     generators of faults, timelines and policy settings
//
// # Entry points
//
//   - [New]: a policy of your own, one layer that calls [Next.Call] to go on
//   - [Then], [Policy.Then]: composition, outermost first
//   - [Policy.Fallback], [Fallback]: a result to use when the chain fails,
//     named and observed through [FallbackOption]s ([WithFallbackName],
//     [WithFallbackObserver]: its event [EventFallbackUsed], of kind
//     [FallbackEventKind])
//   - [Policy.Do], [Policy.Wrap]: running an op
//   - [Policy.Check], [Checked], [Policy.Bounds]: a pipeline's order and
//     worst case, from its layers' descriptions ([Policy.Describe])
//   - [Guard], [Guard2], [GuardErr]: guarded functions that keep their own shape
//   - [As]: typed calls through one shared Policy[any]
//   - [ErrRefused], [RefusedError], [Refuse], [RetryAfter], [Never]: what
//     guards' refusals share
//   - [Permanent], [IsPermanent]: the mark of an error no retry can mend
//   - [Off]: the value that switches a setting off (see Configuration)
//
// # Configuration
//
// Every policy is configured one way: its package's option functions,
// given to its New and applied in order (the last to set a field wins).
// Each package also has a Config struct, one field per option, for
// configurations read at run time; the rule is the same in every package:
//
//   - A zero field means the field's documented default, never "zero" or
//     "none"; Config{} is the default configuration. Each field's doc says
//     its default.
//   - A setting that can be switched off says so, and is switched off by
//     [Off] (-1), in the option and in the field alike.
//   - An option, or a constructor's argument, states its value: given 0
//     where 0 would silently mean something else (the default, "none",
//     "no refill"), it panics naming itself and the value, as
//     retry.WithAttempts(0) and ratelimit.New(0, 10) do. Leave an option
//     out for its default, and give [Off] to switch a setting off.
//   - WithConfig(c) sets the fields of c that are not zero, so it never
//     erases New's arguments, an earlier option, or a default: given
//     bulkhead.New(5, bulkhead.WithConfig(bulkhead.Config{MaxQueue: 1})),
//     the bulkhead has 5 slots and a queue of 1.
//   - A zero in a Config never overrides: it is "not set", so a Config
//     cannot unset what an earlier option set (given
//     timeout.WithAbandon(true), a Config with Abandon false still
//     abandons; given bulkhead.WithMaxQueue(100), MaxQueue 0 keeps the
//     queue). Build from the Config first, then let code override:
//     New(x, WithConfig(fileCfg), codeOptions...).
//   - The two fields of an exclusive pair (breaker's Cooldown and
//     CooldownBackoff, WindowCalls and WindowDuration) follow "last wins"
//     too: setting one to a non-zero value, by its option or by a
//     WithConfig whose Config sets it, clears the other. One Config that
//     sets both is invalid.
//   - c.Validate() reports the first invalid field by name and value, the
//     message New panics with (a duration as JSON spells it: Off as
//     "off"). Invalid options panic when made, or in New.
//   - Config values round-trip through encoding/json: durations are Go
//     duration strings ("250ms", "30s", "off"), fields that cannot be
//     serialised (functions, clocks, shared objects) are left out when
//     writing, and a file that names one, or any unknown field, is an
//     error when reading.
//
// Each option sets one field. A package's Option is a sealed interface (only
// the package makes one); option functions that carry a result type are
// generic in their argument (hedge.WithAccept, cache.WithSize), the Option
// they return is not, and New panics when it is given one of another
// result type. A required value is a constructor's argument (a limiter's
// rate and burst, a fleet guard's name), an optional one an option. The
// options every guard shares read the same in every package: WithName,
// WithClock (it panics on nil) and WithObserver (nil: no events).
//
// # Order
//
// a.Then(b, c) runs a outermost: a(b(c(op))). Put the fallback outermost, then
// retry, then the hedge if there is one, then the breaker, then bulkhead or
// rate limiter, then the timeout innermost, so that each attempt is bounded
// by the timeout, counted by the breaker, and retried as a whole.
//
// Each layer describes its kind and settings ([Layer], [Policy.Layers];
// [Policy.Describe] for a layer of your own), so a pipeline can be checked:
// [Policy.Check] reports the orders that go wrong, each a [Finding] with a
// stable [Code] (a timeout outside a retry, a breaker outside a retry, a
// fallback inside a breaker, ...), unless acknowledged by the check or by
// the layer ([Policy.Acknowledge]), and [Checked] panics on them at
// composition; [Policy.Bounds] works out the most calls to the op and the
// longest time one call can take, or says why there is no bound.
//
// # Panics
//
// A panic in an op goes up to the caller unchanged; on the way, every guard
// records it as a failure and releases what it held. A fallback does not
// catch panics.
package resilience
