package resiliencegrpc

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/resiliencegrpc/internal/refusal"
	"github.com/f0b5b96b/resilience/resiliencegrpc/internal/serve"
	"github.com/f0b5b96b/resilience/telemetry"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/types/known/durationpb"
)

// UnaryServerInterceptor returns a server interceptor that admits each
// unary call through p, a policy of guards such as
//
//	resilience.Then(ratelimit.Policy[struct{}](limiter), bulkhead.Policy[struct{}](bulkhead), breaker.Policy[struct{}](db))
//
// and answers a refusal itself, without calling the handler: see
// [RefusalStatus]. The handler runs inside p, holding what the guards gave
// it (a bulkhead slot) until it returns, under the context p gives it (a
// timeout's deadline); a handler's error whose status the classification
// calls a failure ([IsFailure], or [WithClassify]) is an error for the
// guards (a breaker counts it), any other status an answer. The caller
// gets the handler's reply and error as they came. A handler's panic goes
// through p, which releases what it holds, and on to gRPC.
//
// # Guards only
//
// p is for guards: policies that decide whether the handler runs and learn
// how it went, calling their op at most once, in the call's goroutine:
// breaker, bulkhead, rate limiter, an adaptive concurrency limiter, and a
// timeout that waits for its op (the default: the handler sees the
// deadline on its context). A handler answers a call once, so a policy
// that calls its op again, calls it in another goroutine and returns
// without it, or answers for it cannot work here; the interceptor keeps it
// from doing harm:
//
//   - retry, hedge: the handler runs at most once per call. A second call
//     of the op, or one made while the handler runs, returns at once,
//     without running the handler, an error matching
//     resilience.ErrRefused (a breaker does not count it) and marked
//     resilience.Permanent (a retry stops); the caller gets the first
//     call's reply and error.
//   - a timeout WithAbandon: the interceptor never returns while the
//     handler runs. When p returns first, it waits for the handler, whose
//     reply and error the caller gets: a handler cannot be abandoned. An op
//     that p starts after the interceptor stopped waiting for p is refused
//     as above.
//   - fallback: when p returns a nil error without having called the
//     handler (a fallback turned a guard's refusal into a success), the
//     caller gets an Internal status whose message names the problem,
//     rather than an empty reply. A fallback that returns an error gets
//     the answer to a refusal.
//
// Retry, hedge and fallback belong on the client side
// ([UnaryClientInterceptor]), where a call can be made again.
//
// # Events
//
// With [WithObserver], the interceptors report their decision on each
// call as one event: [EventAnswered] (the handler returned OK or a status
// the classification calls an answer; Err the handler's error, nil for
// OK), [EventFailure] (the handler returned a status the classification
// calls a failure, Err its error; or p returned without calling the
// handler, Err [ErrNotServed]) or [EventRefused] (p refused the call
// before the handler ran; Err p's error, whose status the caller got). The
// events' Name is p's description, p.String() (for example
// "ratelimit(api) > breaker(db)"), and their Key the call's full method,
// "/package.Service/Method". A handler that panics reports nothing: the
// panic goes on to gRPC.
//
// UnaryServerInterceptor panics if an option is nil or invalid; it uses
// [WithClassify], [WithGuardNames], [WithObserver] and [WithKeyedLimit]
// (a limit per client, before p's guards) and ignores the other options.
// The interceptor is safe for simultaneous use.
func UnaryServerInterceptor(p resilience.Policy[struct{}], opts ...Option) grpc.UnaryServerInterceptor {
	r, _ := newConfig(resilience.Policy[any]{}, opts)
	name := p.String()
	p = r.guarded(p)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		c := &unaryServing{r: r, req: req, handler: handler}
		// However p returns, a panic included, the interceptor does not
		// return while the handler runs.
		ran, err := c.Do(ctx, p, c.serve)
		switch {
		case ran:
			r.observeServed(name, info.FullMethod, c.herr)
			return c.resp, c.herr
		case err != nil:
			r.observe(EventRefused, name, info.FullMethod, err)
			st, md := r.refusalStatus(err)
			_ = grpc.SetTrailer(ctx, md)
			return nil, st.Err()
		}
		r.observe(EventFailure, name, info.FullMethod, ErrNotServed)
		return nil, status.Error(codes.Internal, msgNotServed)
	}
}

// Kind is the kind of the server side's events.
const Kind telemetry.Kind = "grpc_server"

// The events of the server side ([UnaryServerInterceptor],
// [StreamServerInterceptor], [InHandle]), which this package owns (as each
// policy owns its events: breaker.EventOpened, ...), one per call, to the
// observer given with [WithObserver]. See "Events" at
// UnaryServerInterceptor for their fields.
const (
	// EventAnswered: the handler answered the call, OK or with a status
	// that is not a failure (Err the handler's error, nil for OK).
	EventAnswered telemetry.Type = "grpc_server.answered"
	// EventFailure: the handler failed (Err its error, a status the
	// classification calls a failure), or the policy returned without
	// calling it (Err ErrNotServed; the caller got Internal).
	EventFailure telemetry.Type = "grpc_server.failure"
	// EventRefused: the call was refused before the handler ran (Err the
	// policy's error; the caller got [RefusalStatus]'s status). A
	// telemetry.Slog writes it at Debug, as every "*.refused" event.
	EventRefused telemetry.Type = "grpc_server.refused"
)

// ErrNotServed is the Err of an [EventFailure] reporting a call that the
// server interceptor's policy let through without calling the handler (a
// fallback turned a refusal into a success): the caller got Internal.
var ErrNotServed = errors.New(msgNotServed)

// observe reports an event of type typ, if r has an observer.
func (r *route) observe(typ telemetry.Type, name, method string, err error) {
	if r.observer != nil {
		r.observer.Observe(telemetry.Event{Type: typ, Name: name, Key: method, Err: err})
	}
}

// observeServed reports the event of a call whose handler returned herr.
func (r *route) observeServed(name, method string, herr error) {
	if r.observer == nil {
		return
	}
	typ := EventAnswered
	if r.guardErr(herr) != nil {
		typ = EventFailure
	}
	r.observe(typ, name, method, herr)
}

// StreamServerInterceptor is [UnaryServerInterceptor] for streams: the
// handler runs inside p for the whole stream, on a stream whose Context is
// the one p gives, and a refused stream is answered with [RefusalStatus]
// before the handler reads anything. p is for guards, as at
// [UnaryServerInterceptor]: the handler runs at most once per stream (a
// retry's or a hedge's further call of the op is a permanent refusal), the
// interceptor never returns while it runs (a timeout WithAbandon is waited
// out), and a policy that returns nil without calling it (a fallback)
// ends the stream with an Internal status naming the problem. With
// [WithObserver] it reports its decision on each stream as the unary
// interceptor does on each call (see "Events" there). It uses the options
// UnaryServerInterceptor uses.
func StreamServerInterceptor(p resilience.Policy[struct{}], opts ...Option) grpc.StreamServerInterceptor {
	r, _ := newConfig(resilience.Policy[any]{}, opts)
	name := p.String()
	p = r.guarded(p)
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		c := &streamServing{r: r, srv: srv, ss: ss, handler: handler}
		ran, err := c.Do(ss.Context(), p, c.serve)
		switch {
		case ran:
			r.observeServed(name, info.FullMethod, c.herr)
			return c.herr
		case err != nil:
			r.observe(EventRefused, name, info.FullMethod, err)
			st, md := r.refusalStatus(err)
			ss.SetTrailer(md)
			return st.Err()
		}
		r.observe(EventFailure, name, info.FullMethod, ErrNotServed)
		return status.Error(codes.Internal, msgNotServed)
	}
}

// msgNotServed is the message of the Internal status of a call that p let
// through without calling the handler: a fallback in p turned a refusal
// into a success.
const msgNotServed = "resiliencegrpc: the server interceptor's policy returned without calling the handler (a fallback cannot answer a call)"

// errServedAlready is what p's op returns when p calls it again (a retry,
// a hedge), or after the interceptor gave up on p (a timeout that
// abandoned the op before it started): a refusal, so a breaker does not
// count it, and permanent, so a retry stops at once.
var errServedAlready = resilience.Permanent(refusal.New("resiliencegrpc: the handler runs once per call: the server interceptor's policy called its op again", nil))

// unaryServing is one unary call going through UnaryServerInterceptor.
type unaryServing struct {
	serve.Once // the handler runs once; the interceptor waits for it
	r          *route
	req        any
	handler    grpc.UnaryHandler
	resp       any   // the handler's, once it returned
	herr       error // the handler's, once it returned
}

// serve is p's op: it runs the handler, the first time it is called, and
// tells p's guards whether it failed. A later or simultaneous call returns
// errServedAlready without running it.
func (c *unaryServing) serve(ctx context.Context) (struct{}, error) {
	if !c.Enter() {
		return struct{}{}, errServedAlready
	}
	defer c.Exit()
	c.resp, c.herr = c.handler(ctx, c.req)
	return struct{}{}, c.r.guardErr(c.herr)
}

// streamServing is one stream going through StreamServerInterceptor.
type streamServing struct {
	serve.Once // the handler runs once; the interceptor waits for it
	r          *route
	srv        any
	ss         grpc.ServerStream
	handler    grpc.StreamHandler
	herr       error // the handler's, once it returned
}

// serve is p's op, as unaryServing's: it runs the handler once, on a
// stream whose Context is ctx.
func (c *streamServing) serve(ctx context.Context) (struct{}, error) {
	if !c.Enter() {
		return struct{}{}, errServedAlready
	}
	defer c.Exit()
	ss := c.ss
	if ctx != ss.Context() {
		ss = &serverStream{ServerStream: ss, ctx: ctx}
	}
	c.herr = c.handler(c.srv, ss)
	return struct{}{}, c.r.guardErr(c.herr)
}

// serverStream is a ServerStream with the context the guards gave.
type serverStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *serverStream) Context() context.Context { return s.ctx }

// guardErr returns a handler's error as the guards see it: nil for an
// answer.
func (r *route) guardErr(err error) error {
	if err == nil || !r.isFailure(status.Convert(err)) {
		return nil
	}
	return err
}

// InHandle returns a tap handle (grpc.InTapHandle) that admits each call
// through p before gRPC reads its first message, and refuses it with
// [RefusalStatus]'s status otherwise. gRPC calls it on the connection's
// reading goroutine, under its lock, so p must decide at once: put rate
// limiters here (ratelimit.Policy, [WithKeyedLimit]), never a guard that
// waits (ratelimit.WaitPolicy, a bulkhead with a queue). A guard that
// holds something for the call's length (a bulkhead slot, a breaker's
// permit) belongs in the interceptors, since the handle returns before the
// handler runs.
//
// gRPC ends a call refused here with its status only, no trailers, so the
// pushback travels as the status's google.rpc.RetryInfo detail, which the
// client interceptors read as they read the trailer. The call's incoming
// metadata and peer are in the context p gets ([MetadataKey], [PeerKey]).
// With [WithObserver] it reports each call it refuses as [EventRefused]
// (Key the call's full method); a call it admits is reported by the
// interceptors, if they have an observer. InHandle uses [WithGuardNames],
// [WithObserver] and [WithKeyedLimit] (a limit per client, before p) and
// ignores the other options; it panics if an option is nil.
func InHandle(p resilience.Policy[struct{}], opts ...Option) tap.ServerInHandle {
	r, _ := newConfig(resilience.Policy[any]{}, opts)
	name := p.String()
	p = r.guarded(p)
	return func(ctx context.Context, info *tap.Info) (context.Context, error) {
		_, err := p.Do(ctx, admit)
		if err != nil {
			r.observe(EventRefused, name, info.FullMethodName, err)
			st, _ := r.refusalStatus(err)
			return ctx, st.Err()
		}
		return ctx, nil
	}
}

func admit(context.Context) (struct{}, error) { return struct{}{}, nil }

// RefusalStatus returns how the server side answers a call that its guards
// refused with err: the status and the trailer to send with it.
//
// The status is ResourceExhausted for a rate limit (ratelimit.ErrLimited),
// the code of the context for a caller that has gone (Canceled,
// DeadlineExceeded), Unavailable for any other refusal or error (a full
// bulkhead, an open breaker). The wait the refusal asks for (its
// resilience.RetryAfter hint or, when it has none or a hint of 0, which a
// client would read as no pushback, 1 second; rounded up to whole
// milliseconds) is the [PushbackKey] trailer and a
// google.rpc.RetryInfo detail of the status; a hint of resilience.Never (a
// rate limiter of rate 0) is a pushback of -1, "do not retry", and a
// negative RetryInfo delay.
//
// The status goes to a remote client, so by default its message says
// nothing of the server's guards: it is the code's name and the pushback,
// such as "resource exhausted: retry after 198ms", "unavailable: retry
// never" or "canceled". With [WithGuardNames] it is the refusal's own
// reason and guard name instead of the code's name ("ratelimit: limited
// (api): retry after 198ms"; err's message when err is not a
// *resilience.RefusedError). Either way the message states the wait once,
// as the pushback gives it; a [*StatusError] of the client interceptors
// does not repeat it. RefusalStatus uses WithGuardNames and ignores the
// other options; it panics if an option is nil.
func RefusalStatus(err error, opts ...Option) (*status.Status, metadata.MD) {
	r, _ := newConfig(resilience.Policy[any]{}, opts)
	return r.refusalStatus(err)
}

func (r *route) refusalStatus(err error) (*status.Status, metadata.MD) {
	code := codes.Unavailable
	switch {
	case errors.Is(err, ratelimit.ErrLimited):
		code = codes.ResourceExhausted
	case errors.Is(err, context.Canceled):
		return status.New(codes.Canceled, r.refusalText(codes.Canceled, err)), nil
	case errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, resilience.ErrRefused):
		return status.New(codes.DeadlineExceeded, r.refusalText(codes.DeadlineExceeded, err)), nil
	}
	after, ok := resilience.RetryAfter(err)
	if !ok || after <= 0 {
		after = time.Second
	}
	ms := int64(-1)
	delay := -time.Millisecond
	if after != resilience.Never {
		ms = int64((after + time.Millisecond - 1) / time.Millisecond)
		delay = time.Duration(ms) * time.Millisecond
	}
	st := status.New(code, r.refusalText(code, err)+": "+hintText(delay))
	if ds, derr := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(delay)}); derr == nil {
		st = ds
	}
	return st, metadata.Pairs(PushbackKey, strconv.FormatInt(ms, 10))
}

// refusalText returns what a refusal's status message says before its
// hint: the code's name in words, or with WithGuardNames the refusal's
// reason and guard name.
func (r *route) refusalText(code codes.Code, err error) string {
	if r.guardNames {
		if re, ok := err.(*resilience.RefusedError); ok {
			if re.Name() == "" {
				return re.Reason().Error()
			}
			return re.Reason().Error() + " (" + re.Name() + ")"
		}
		return err.Error()
	}
	switch code {
	case codes.ResourceExhausted:
		return "resource exhausted"
	case codes.Canceled:
		return "canceled"
	case codes.DeadlineExceeded:
		return "deadline exceeded"
	}
	return "unavailable"
}

// hintText returns how a message states a pushback of d: "retry after
// 198ms", or "retry never" for a negative d.
func hintText(d time.Duration) string {
	if d < 0 || d == resilience.Never {
		return "retry never"
	}
	return "retry after " + d.String()
}
