// Package resiliencehttp puts the library's policies on net/http, with the
// standard library only.
//
// On the client side, [Transport] is an http.RoundTripper that sends each
// request through a resilience.Policy[*http.Response]: retry, breaker,
// timeout and hedge see every attempt. It classifies responses (429 and
// 5xx except 501 are failures, see [IsFailure]), turns Retry-After into the
// failure's RetryAfter hint ([StatusError], [ParseRetryAfter]), replays
// bodies through Request.GetBody and refuses to resend one it cannot
// ([ErrBodyNotReplayable]), and closes every response it discards, so no
// connection leaks, without making the caller wait. It drains a discarded
// body of up to 64 KiB first (a hedge loser's in the background, for at
// most 250 ms), so that its connection can be reused; a longer body, or one
// that stalls, is closed unread, which costs its connection. A failure's
// body is read (up to 64 KiB) under the attempt's context, so a timeout or
// a hedge bounds it as it bounds the wait for the headers. A bulkhead in
// the policy bounds attempts up to their headers; Transport.Bulkhead
// bounds whole exchanges, bodies included (see "Guards and response
// bodies" at [Transport]).
//
// On the server side, [Middleware] puts guards (rate limiter, bulkhead,
// breaker) in front of a handler and answers their refusals with 429 or 503
// and a Retry-After header; [WithKeyedLimit] adds a rate limit per key (a
// client, an API key, a tenant), bounded in the keys it tracks. The guards
// learn what the handler did: a 5xx answer other than 501, or a panic, is a
// failure, so a breaker opens when the handler keeps failing. Its policy is
// for guards only: the handler runs at most once per request, and ServeHTTP
// never returns while it runs, whatever the policy does (a retry's second
// call is refused, an abandoning timeout is waited out, a fallback that
// skips the handler gets 500). [WithObserver] reports its decision on
// each request as an event: [EventAnswered], [EventFailure] or
// [EventRefused] (kind [Kind], "http_server").
//
// [HostBreaker] keys breakers by the request's host (a breaker.Keyed): a
// host that fails is cut off while the others are still called. The layers
// of Transport.Policy find the request being sent in their context
// ([Request], [RequestHost]), for key functions of their own.
//
// [Health] is a health check over a telemetry.Registry: 200, or 503 when a
// breaker named critical ([WithCritical]; none by default) is open, with
// every registered guard's state as JSON.
//
// Entry points: [Transport], [Middleware], [WithKeyedLimit], [HostBreaker],
// [Request], [RequestHost], [Health], [WithCritical], [IsFailure],
// [ParseRetryAfter], [StatusError], [ErrBodyNotReplayable].
package resiliencehttp
