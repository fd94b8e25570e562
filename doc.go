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
//   - policy/breaker: circuit breaker (closed, open, half-open), a shared guard
//   - policy/bulkhead: bounded concurrency with an optional queue, a shared guard
//   - policy/ratelimit: token bucket rate limiter, a shared guard
//   - policy/retry: retries with backoff and a retry budget
//   - policy/timeout: a deadline for each call
//   - policy/hedge: hedged requests
//
// Guards (breaker, bulkhead, rate limiter) are untyped and shared per
// dependency; each has an adapter that makes it a Policy[T] for any T.
// Time comes from package clock, delay schedules from package backoff.
//
// # Entry points
//
//   - [New]: a policy of your own, one layer that calls [Next.Call] to go on
//   - [Then], [Policy.Then]: composition, outermost first
//   - [Policy.Fallback], [Fallback]: a result to use when the chain fails
//   - [Policy.Do], [Policy.Wrap]: running an op
//   - [Guard], [Guard2], [GuardErr]: guarded functions that keep their own shape
//   - [As]: typed calls through one shared Policy[any]
//   - [ErrRefused], [RetryAfter]: what guards' refusals share
//
// # Order
//
// a.Then(b, c) runs a outermost: a(b(c(op))). Put the fallback outermost, then
// retry, then the breaker, then bulkhead or rate limiter, then the timeout
// innermost, so that each attempt is bounded by the timeout, counted by the
// breaker, and retried as a whole.
//
// # Panics
//
// A panic in an op goes up to the caller unchanged; on the way, every guard
// records it as a failure and releases what it held. A fallback does not
// catch panics.
package resilience
