package resiliencegrpc

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"github.com/f0b5b96b/resilience"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// UnaryClientInterceptor returns a client interceptor that runs each unary
// call through p, a policy of any layers (retry, breaker, timeout, hedge,
// ...), or through the policy that [WithMethod] gives its method. The
// policies see each attempt as one call of the invoker under the context
// they give it, so a timeout's deadline goes to the server with the
// attempt:
//
//   - a call that ends OK is a success;
//   - a status that [IsFailure] (or [WithClassify]) calls a failure is the
//     attempt's error, a [*StatusError] carrying the server's pushback
//     (see [ParsePushback]);
//   - any other status is the server's answer: a success for the policies
//     (a breaker counts it as one, a retry stops), and the caller gets it
//     as the invoker returned it;
//   - an attempt made while the breaker given by [WithBreaker] is
//     half-open (a trial), under a deadline, waits for a ready connection
//     (grpc.WaitForReady(true)) up to that deadline;
//   - an attempt whose own context has ended (the caller gave up, or a
//     timeout or a hedge cut it short) fails with that context's cause, not
//     a status: a breaker ignores the caller's cancellation and counts a
//     timeout, as it does for any call.
//
// The caller gets nil, the answer, or the error the policies gave up with,
// always with a gRPC status: a *StatusError keeps its own (status.Code
// finds it through a *retry.Error); other errors get one: the caller's
// context's code when it has ended, ResourceExhausted for a rate limiter's
// refusal, Unavailable for another refusal (an open breaker, a full
// bulkhead), DeadlineExceeded for a timeout, Unknown for the rest; errors.Is
// and errors.As still reach the error (breaker.ErrOpen, timeout.ErrTimeout).
//
// The value the policies carry is the interceptor's own: a layer that makes
// up a result (a Fallback[any]) may return a proto message of the reply's
// type, which is copied into the reply, or nil, which leaves the reply as
// it is; any other value is an Internal error.
//
// Attempts that run at once (a hedge's) decode their replies into messages
// of their own, and the winner's is copied into the caller's reply. The
// interceptor returns once every attempt it started has returned (a gRPC
// call returns soon after its context is cancelled, as a timeout or a hedge
// cancels a losing attempt's); an attempt that a layer starts after that
// fails without being made.
//
// Turn gRPC's own retries off (grpc.WithDisableRetry()) when the policy
// retries, or the two multiply: see the README. The interceptor is safe for
// simultaneous use. UnaryClientInterceptor panics if an option is nil or
// invalid.
func UnaryClientInterceptor(p resilience.Policy[any], opts ...Option) grpc.UnaryClientInterceptor {
	def, methods := newConfig(p, opts)
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
		r := def
		if methods != nil {
			if mr, ok := methods[method]; ok {
				r = mr
			}
		}
		c := &unaryCall{r: r, method: method, req: req, reply: reply, cc: cc, invoker: invoker, opts: callOpts}
		v, err := r.policy.Do(ctx, c.attempt)
		c.mu.Lock()
		c.finished = true
		c.mu.Unlock()
		c.running.Wait()
		if err != nil {
			return callerError(ctx, err)
		}
		switch v := v.(type) {
		case nil:
			return nil
		case *answer:
			return v.err
		case *decoded:
			return copyMessage(reply, v.msg)
		default:
			return copyMessage(reply, v)
		}
	}
}

// unaryCall is the state of one unary call through the interceptor.
type unaryCall struct {
	r          *route
	method     string
	req, reply any
	cc         *grpc.ClientConn
	invoker    grpc.UnaryInvoker
	opts       []grpc.CallOption

	running  sync.WaitGroup // attempts started and not returned
	mu       sync.Mutex
	finished bool // the interceptor is returning
	busy     bool // an attempt is decoding into reply

	// Of the attempt that decodes into reply (one at a time).
	trailer     metadata.MD
	withTrailer []grpc.CallOption
	optsBuf     [4]grpc.CallOption
}

// answer is the result of an attempt that ended with the server's answer:
// a status that is not a failure.
type answer struct{ err error }

// decoded is the result of an attempt that decoded its reply into a message
// of its own, msg, because another attempt was decoding into the caller's.
type decoded struct{ msg any }

// attempt is the Op the policies run: one call of the invoker.
func (c *unaryCall) attempt(ctx context.Context) (any, error) {
	c.mu.Lock()
	if c.finished {
		c.mu.Unlock()
		return nil, errReturned
	}
	reply, own := c.reply, !c.busy
	if own {
		c.busy = true
	} else {
		reply = newMessage(c.reply)
	}
	c.running.Add(1)
	c.mu.Unlock()
	defer func() {
		if own {
			c.mu.Lock()
			c.busy = false
			c.mu.Unlock()
		}
		c.running.Done()
	}()

	// The attempt that decodes into the caller's reply reads its trailer
	// into the call's own fields, allocating nothing; the others (a
	// hedge's) into their own.
	var trailer *metadata.MD
	var opts []grpc.CallOption
	if own {
		trailer = &c.trailer
		c.trailer = nil
		opts = c.ownOpts()
	} else {
		trailer = new(metadata.MD)
		opts = append(c.opts[:len(c.opts):len(c.opts)], grpc.Trailer(trailer))
	}
	if c.r.waitsForReady(ctx) {
		opts = append(opts[:len(opts):len(opts)], waitForReady)
	}
	err := c.invoker(ctx, c.method, c.req, reply, c.cc, opts...)
	switch {
	case err == nil && own:
		return nil, nil
	case err == nil:
		return &decoded{reply}, nil
	case ctx.Err() != nil:
		return nil, context.Cause(ctx)
	}
	s := status.Convert(err)
	if !c.r.isFailure(s) {
		return &answer{err}, nil
	}
	return nil, &StatusError{Status: s, After: pushbackOf(*trailer, s)}
}

// ownOpts returns the call options of the attempt that decodes into the
// caller's reply: the caller's, and a grpc.Trailer into c.trailer. They are
// made once per call, in c's own array when they fit.
func (c *unaryCall) ownOpts() []grpc.CallOption {
	if c.withTrailer == nil {
		if len(c.opts) < len(c.optsBuf) {
			c.withTrailer = append(c.optsBuf[:0], c.opts...)
		} else {
			c.withTrailer = append(c.opts[:len(c.opts):len(c.opts)], nil)[:len(c.opts)]
		}
		c.withTrailer = append(c.withTrailer, grpc.Trailer(&c.trailer))
	}
	return c.withTrailer
}

// newMessage returns a new, empty message of m's type.
func newMessage(m any) any {
	if pm, ok := m.(proto.Message); ok {
		return pm.ProtoReflect().New().Interface()
	}
	return reflect.New(reflect.TypeOf(m).Elem()).Interface()
}

// copyMessage sets dst to src, a message of dst's type, as a result that a
// policy returned.
func copyMessage(dst, src any) error {
	if dst == src {
		return nil
	}
	if reflect.TypeOf(dst) != reflect.TypeOf(src) {
		return status.Error(codes.Internal, fmt.Sprintf("resiliencegrpc: the policy returned a %T, not a result of the call (a %T)", src, dst))
	}
	if pd, ok := dst.(proto.Message); ok {
		proto.Reset(pd)
		proto.Merge(pd, src.(proto.Message))
		return nil
	}
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src).Elem())
	return nil
}
