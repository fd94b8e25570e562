// Package resiliencegrpc puts the library's policies on gRPC, as
// resiliencehttp puts them on net/http.
//
// On the client side, [UnaryClientInterceptor] runs each unary call through
// a resilience.Policy[any] (one pipeline, and one breaker, for a dependency
// whatever its methods' message types), and [StreamClientInterceptor] runs
// the establishment of each stream through one. They classify statuses:
//
//	status                                          policies see          breaker   retry
//	OK                                              success               success   stops
//	Unavailable, DeadlineExceeded, ResourceExhausted,
//	Internal, Unknown ([IsFailure])                 *StatusError          failure   retries
//	any other (InvalidArgument, NotFound, ...)      success (an answer)   success   stops
//	the attempt's context ended (caller, timeout)   the context's cause   as the breaker's classification says
//
// so a server that answers is up, whatever it answers, and only the
// failure codes trip a breaker or cost a retry; the caller gets an answer
// as the server sent it. [WithClassify] changes the classification. The
// caller's own cancellation is neutral (the breaker ignores it) and its own
// deadline ends the call (DeadlineExceeded from a server whose caller's
// deadline has not passed is a failure like the others). A failure carries
// the server's pushback (gRFC A6's grpc-retry-pushback-ms trailer, or a
// google.rpc.RetryInfo detail) as its RetryAfter hint, so a retry waits at
// least that long, and a negative or malformed pushback stops it
// ([ParsePushback]).
//
// A stream is committed when the server's response headers arrive (with
// its first message): before that a retry may open it again and replay what
// the caller sent; after it, never (A6's rule), and its later failures are
// recorded on the breaker given by [WithBreaker]. A half-open trial of that
// breaker made under a deadline waits for a ready connection
// (grpc.WaitForReady), so that a connection still in gRPC's reconnect
// backoff after the server came back does not fail it. [WithMethod] gives
// a method its own policy.
//
// On the server side, [UnaryServerInterceptor] and [StreamServerInterceptor]
// put guards (rate limiter, bulkhead, breaker) in front of the handlers,
// and [InHandle] puts rate limiters in gRPC's tap, before a call's message
// is read. Guards only: a handler runs at most once per call, and the
// interceptors never return while it runs, so a retry or a hedge there
// gets a permanent refusal for its further attempts, and a fallback that
// answers for the handler an Internal status; those belong on the client
// side. A refusal is answered with ResourceExhausted (a rate limit) or
// Unavailable and a pushback ([RefusalStatus]), under a generic message that
// names no guard unless [WithGuardNames] says so. [WithKeyedLimit] limits each
// client apart, keyed by [PeerKey] or [MetadataKey]. [WithObserver]
// reports the server side's decision on each call as an event of this
// package, kind [Kind] ("grpc_server"): [EventAnswered], [EventFailure] or
// [EventRefused].
//
// Turn gRPC's own retries off on a client whose policy retries
// (grpc.WithDisableRetry()): see the README for how the two stack.
//
// Entry points: [UnaryClientInterceptor], [StreamClientInterceptor],
// [WithClassify], [WithBreaker], [WithMethod], [WithGuardNames],
// [WithObserver],
// [UnaryServerInterceptor],
// [StreamServerInterceptor], [InHandle], [WithKeyedLimit], [RefusalStatus],
// [PeerKey], [MetadataKey], [IsFailure], [ParsePushback], [StatusError],
// [PushbackKey], [ReplayLimit], [ErrNotReplayable].
package resiliencegrpc
