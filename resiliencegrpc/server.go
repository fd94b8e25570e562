package resiliencegrpc

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
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
// it (a bulkhead slot) until it returns; a handler's error whose status the
// classification calls a failure ([IsFailure], or [WithClassify]) is an
// error for the guards (a breaker counts it), any other status an answer.
// The caller gets the handler's reply and error as they came.
//
// Use guards here: a policy that runs its op more than once or in another
// goroutine (retry, hedge, a timeout that abandons its op) cannot run a
// handler. A handler's panic goes through p, which releases what it holds,
// and on to gRPC. UnaryServerInterceptor panics if an option is nil or
// invalid; it uses [WithClassify] and ignores the other options.
func UnaryServerInterceptor(p resilience.Policy[struct{}], opts ...Option) grpc.UnaryServerInterceptor {
	r, _ := newConfig(resilience.Policy[any]{}, opts)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		var (
			served bool
			resp   any
			herr   error
		)
		_, err := p.Do(ctx, func(ctx context.Context) (struct{}, error) {
			served = true
			resp, herr = handler(ctx, req)
			return struct{}{}, r.guardErr(herr)
		})
		if !served && err != nil {
			st, md := RefusalStatus(err)
			_ = grpc.SetTrailer(ctx, md)
			return nil, st.Err()
		}
		return resp, herr
	}
}

// StreamServerInterceptor is [UnaryServerInterceptor] for streams: the
// handler runs inside p for the whole stream, and a refused stream is
// answered with [RefusalStatus] before the handler reads anything.
func StreamServerInterceptor(p resilience.Policy[struct{}], opts ...Option) grpc.StreamServerInterceptor {
	r, _ := newConfig(resilience.Policy[any]{}, opts)
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		var (
			served bool
			herr   error
		)
		_, err := p.Do(ss.Context(), func(ctx context.Context) (struct{}, error) {
			served = true
			if ctx != ss.Context() {
				ss = &serverStream{ServerStream: ss, ctx: ctx}
			}
			herr = handler(srv, ss)
			return struct{}{}, r.guardErr(herr)
		})
		if !served && err != nil {
			st, md := RefusalStatus(err)
			ss.SetTrailer(md)
			return st.Err()
		}
		return herr
	}
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
// limiters here (ratelimit.Policy, [KeyedLimit]), never a guard that
// waits (ratelimit.WaitPolicy, a bulkhead with a queue). A guard that
// holds something for the call's length (a bulkhead slot, a breaker's
// permit) belongs in the interceptors, since the handle returns before the
// handler runs.
//
// gRPC ends a call refused here with its status only, no trailers, so the
// pushback travels as the status's google.rpc.RetryInfo detail, which the
// client interceptors read as they read the trailer. The call's incoming
// metadata and peer are in the context p gets ([MetadataKey], [PeerKey]).
func InHandle(p resilience.Policy[struct{}]) tap.ServerInHandle {
	return func(ctx context.Context, info *tap.Info) (context.Context, error) {
		_, err := p.Do(ctx, admit)
		if err != nil {
			st, _ := RefusalStatus(err)
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
// bulkhead, an open breaker). Its message is err's. The wait the refusal
// asks for (its resilience.RetryAfter hint or, when it has none, 1 second,
// rounded up to whole milliseconds) is the [PushbackKey] trailer and a
// google.rpc.RetryInfo detail of the status; a hint of resilience.Never
// (a rate limiter of rate 0) is a pushback of -1, "do not retry", and a
// negative RetryInfo delay.
func RefusalStatus(err error) (*status.Status, metadata.MD) {
	code := codes.Unavailable
	switch {
	case errors.Is(err, ratelimit.ErrLimited):
		code = codes.ResourceExhausted
	case errors.Is(err, context.Canceled):
		return status.New(codes.Canceled, err.Error()), nil
	case errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, resilience.ErrRefused):
		return status.New(codes.DeadlineExceeded, err.Error()), nil
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
	st := status.New(code, err.Error())
	if ds, derr := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(delay)}); derr == nil {
		st = ds
	}
	return st, metadata.Pairs(PushbackKey, strconv.FormatInt(ms, 10))
}
