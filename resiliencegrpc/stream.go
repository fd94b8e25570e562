package resiliencegrpc

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/resiliencegrpc/internal/refusal"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

// ReplayLimit is how many bytes of messages a stream keeps, before it is
// committed, to send them again on a new attempt: 256 KiB, as gRPC's own
// retries keep. A stream that sends more (or sends a message that is not a
// proto.Message, which cannot be copied) before it is committed is not
// replayed: its next failure is its last, see [ErrNotReplayable].
const ReplayLimit = 256 << 10

// ErrNotReplayable is the error of an attempt after the first for a stream
// that cannot be replayed: it sent more than [ReplayLimit] bytes, or a
// message that is not a proto.Message, before it was committed. The failure
// before it is marked resilience.Permanent, so that a retry stops at once;
// a hedge's extra attempt gets this error, marked so too. It matches
// resilience.ErrRefused: the stream was not opened, so a breaker does not
// count it. It is a sentinel: compare with errors.Is.
var ErrNotReplayable error = refusal.New("resiliencegrpc: stream cannot be replayed (it sent too much, or a message that is not a proto.Message)", nil)

// StreamClientInterceptor returns a client interceptor that runs the
// establishment of each stream through p, or through the policy that
// [WithMethod] gives its method.
//
// Establishing a stream is one attempt for the policies: it opens the
// stream, sends it the messages the caller has sent so far (and those it
// sends meanwhile), and waits for the server's response headers, which a
// gRPC server sends with its first response message (or earlier, with
// SendHeader). When they arrive the stream is committed, as gRFC A6 says: it
// belongs to the caller from then on, and it is never replayed. A stream
// that ends before that, with a status the classification calls a failure
// (see [UnaryClientInterceptor]), is the attempt's error, a [*StatusError]
// with the server's pushback, and the policies may open another one and
// replay the messages to it; a stream that ends with an answer (NotFound,
// say) is a success for the policies, and the caller gets the answer from
// RecvMsg. A timeout in p bounds the wait for the headers, not the stream.
//
// A committed stream lives under the caller's context. When it fails later
// (RecvMsg returns an error that the classification calls a failure, while
// the caller's context has not ended), the failure is recorded on the
// breaker given by [WithBreaker], if any, with (*breaker.Breaker).Record:
// once per stream, out of band, since the policies are done with it. An
// attempt made while that breaker is half-open waits for a ready
// connection, as at [UnaryClientInterceptor].
//
// The interceptor returns the stream once its first attempt has opened a
// stream, or the error the policies gave up with (an open breaker's
// refusal, say), with a gRPC status as [UnaryClientInterceptor] says. Until
// the stream is committed, SendMsg and CloseSend go to the attempt in
// progress and are kept for the next one (see [ReplayLimit]); SendMsg
// returns io.EOF once the policies have given up, and RecvMsg then returns
// their error. Header and RecvMsg wait for the establishment; Header
// returns its error, if it failed. As with any gRPC stream, the caller must
// cancel its context or read the stream to its end, else the stream and
// the goroutine that establishes it are kept.
//
// The policy's result is the interceptor's own: a layer that makes up a
// result (a Fallback[any]) cannot make a stream, and the caller then gets
// an Internal error. The interceptor is safe for simultaneous use.
// StreamClientInterceptor panics if an option is nil or invalid.
func StreamClientInterceptor(p resilience.Policy[any], opts ...Option) grpc.StreamClientInterceptor {
	def, methods := newConfig(p, opts)
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, callOpts ...grpc.CallOption) (grpc.ClientStream, error) {
		r := def
		if methods != nil {
			if mr, ok := methods[method]; ok {
				r = mr
			}
		}
		cs := &clientStream{
			r: r, ctx: ctx, desc: desc, cc: cc, method: method, streamer: streamer, opts: callOpts,
			opened: make(chan struct{}), done: make(chan struct{}),
		}
		go cs.establish()
		<-cs.opened
		cs.mu.Lock()
		failed := cs.finished && cs.won == nil && cs.attempts == 0
		cs.mu.Unlock()
		if failed {
			<-cs.done
			return nil, cs.err
		}
		return cs, nil
	}
}

// clientStream is a stream through the interceptor: the attempts to
// establish it and, once committed, the winner.
type clientStream struct {
	r        *route
	ctx      context.Context // the caller's
	desc     *grpc.StreamDesc
	cc       *grpc.ClientConn
	method   string
	streamer grpc.Streamer
	opts     []grpc.CallOption

	opened     chan struct{} // closed once an attempt has opened a stream, or the policies returned
	openedOnce sync.Once
	done       chan struct{} // closed once the policies returned: won or err is set

	mu       sync.Mutex
	attempts int              // attempts that opened a stream
	live     []*streamAttempt // attempts with an open stream, not yet returned
	sent     []any            // messages sent before the commit, for replay
	size     int              // their size in bytes
	closed   bool             // CloseSend was called before the commit
	noReplay bool             // sent too much, or a message that cannot be copied
	finished bool             // the policies returned
	won      *streamAttempt   // the committed stream; nil if none
	err      error            // why there is none: the policies' error or the answer
	trailer  metadata.MD      // the last failed attempt's trailer
	recorded bool             // a failure of the committed stream was recorded
}

// streamAttempt is one attempt's stream.
type streamAttempt struct {
	s      grpc.ClientStream
	cancel context.CancelFunc
}

// establish runs the policies; it is the stream's goroutine until they
// return.
func (cs *clientStream) establish() {
	v, err := cs.r.policy.Do(cs.ctx, cs.attempt)
	cs.mu.Lock()
	cs.finished = true
	if err == nil {
		switch w := v.(type) {
		case *streamAttempt:
			cs.won = w
		case *answer:
			cs.err = w.err
		default:
			cs.err = status.Error(codes.Internal, fmt.Sprintf("resiliencegrpc: the policy returned a %T, not a stream", v))
		}
	} else {
		cs.err = callerError(cs.ctx, err)
	}
	for _, a := range cs.live {
		if a != cs.won {
			a.cancel()
		}
	}
	cs.live, cs.sent = nil, nil
	cs.mu.Unlock()
	close(cs.done)
	cs.openedOnce.Do(func() { close(cs.opened) })
}

// attempt is the Op the policies run: open a stream, replay what the caller
// sent, and wait for the server's response headers.
func (cs *clientStream) attempt(ctx context.Context) (any, error) {
	cs.mu.Lock()
	switch {
	case cs.finished:
		cs.mu.Unlock()
		return nil, errReturned
	case cs.attempts > 0 && cs.noReplay:
		cs.mu.Unlock()
		return nil, resilience.Permanent(ErrNotReplayable)
	}
	cs.mu.Unlock()

	// The stream lives under the caller's context; the attempt's context
	// governs it until it is committed.
	sctx, cancel := context.WithCancel(cs.ctx)
	stop := context.AfterFunc(ctx, cancel)
	opts := cs.opts
	if cs.r.waitsForReady(ctx) {
		opts = append(opts[:len(opts):len(opts)], waitForReady)
	}
	s, err := cs.streamer(sctx, cs.desc, cs.cc, cs.method, opts...)
	if err != nil {
		stop()
		cancel()
		return cs.failure(ctx, nil, err)
	}
	a := &streamAttempt{s: s, cancel: cancel}
	cs.mu.Lock()
	if cs.finished {
		cs.mu.Unlock()
		cancel()
		return nil, errReturned
	}
	cs.attempts++
	for _, m := range cs.sent {
		if s.SendMsg(m) != nil {
			break // the stream ended: Header and RecvMsg say how
		}
	}
	if cs.closed {
		_ = s.CloseSend()
	}
	cs.live = append(cs.live, a)
	cs.mu.Unlock()
	cs.openedOnce.Do(func() { close(cs.opened) })

	md, _ := s.Header()
	var recvErr error
	if md == nil {
		// The stream ended without headers: RecvMsg returns its status
		// without reading a message.
		recvErr = s.RecvMsg(new(emptypb.Empty))
	}
	if !stop() {
		cs.drop(a)
		return nil, context.Cause(ctx)
	}
	if md != nil || recvErr == io.EOF {
		// Committed, unless a layer prefers another attempt: it stays
		// live, and gets what the caller sends, until establish decides.
		return a, nil
	}
	cs.drop(a)
	return cs.failure(ctx, s.Trailer(), recvErr)
}

// drop forgets a, an attempt that failed, and releases its stream.
func (cs *clientStream) drop(a *streamAttempt) {
	cs.mu.Lock()
	for i, l := range cs.live {
		if l == a {
			cs.live = append(cs.live[:i], cs.live[i+1:]...)
			break
		}
	}
	cs.mu.Unlock()
	a.cancel()
}

// failure returns what an attempt that ended with err says to the policies:
// the context's cause if the attempt's context ended, the answer if err's
// status is not a failure, else a *StatusError, marked permanent when the
// stream cannot be replayed.
func (cs *clientStream) failure(ctx context.Context, trailer metadata.MD, err error) (any, error) {
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	s := status.Convert(err)
	if !cs.r.isFailure(s) {
		return &answer{err}, nil
	}
	cs.mu.Lock()
	cs.trailer = trailer
	noReplay := cs.noReplay
	cs.mu.Unlock()
	var fail error = &StatusError{Status: s, After: pushbackOf(trailer, s)}
	if noReplay {
		fail = resilience.Permanent(fail)
	}
	return nil, fail
}

// committed returns the committed stream, waiting for the establishment;
// nil and the reason when there is none.
func (cs *clientStream) committed() (*streamAttempt, error) {
	<-cs.done
	return cs.won, cs.err
}

// SendMsg sends m on the committed stream or, before the commit, on the
// attempts in progress, and keeps it for the next ones.
func (cs *clientStream) SendMsg(m any) error {
	cs.mu.Lock()
	switch {
	case cs.won != nil:
		s := cs.won.s
		cs.mu.Unlock()
		return s.SendMsg(m)
	case cs.finished:
		cs.mu.Unlock()
		return io.EOF // RecvMsg returns the policies' error
	case cs.closed:
		cs.mu.Unlock()
		return status.Error(codes.Internal, "SendMsg called after CloseSend")
	}
	defer cs.mu.Unlock()
	if !cs.noReplay {
		if pm, ok := m.(proto.Message); ok && cs.size+proto.Size(pm) <= ReplayLimit {
			cs.size += proto.Size(pm)
			cs.sent = append(cs.sent, proto.Clone(pm))
		} else {
			cs.noReplay, cs.sent = true, nil
		}
	}
	for _, a := range cs.live {
		_ = a.s.SendMsg(m) // a stream that ended says how through Header and RecvMsg
	}
	return nil
}

// CloseSend closes the sending side of the committed stream or, before the
// commit, of the attempts in progress and of the next ones.
func (cs *clientStream) CloseSend() error {
	cs.mu.Lock()
	switch {
	case cs.won != nil:
		s := cs.won.s
		cs.mu.Unlock()
		return s.CloseSend()
	case cs.finished:
		cs.mu.Unlock()
		return nil
	}
	defer cs.mu.Unlock()
	cs.closed = true
	for _, a := range cs.live {
		_ = a.s.CloseSend()
	}
	return nil
}

// RecvMsg waits for the establishment, then receives from the committed
// stream; it records a failure of the committed stream on the breaker.
func (cs *clientStream) RecvMsg(m any) error {
	w, err := cs.committed()
	if w == nil {
		return err
	}
	err = w.s.RecvMsg(m)
	if err == nil {
		return nil
	}
	if err != io.EOF {
		cs.recordFailure(err)
	}
	w.cancel() // the stream is over: release its context
	return err
}

// recordFailure records err, the error of the committed stream, on the
// breaker if it is a failure, once per stream.
func (cs *clientStream) recordFailure(err error) {
	b := cs.r.breaker
	if b == nil || cs.ctx.Err() != nil || !cs.r.isFailure(status.Convert(err)) {
		return
	}
	cs.mu.Lock()
	first := !cs.recorded
	cs.recorded = true
	cs.mu.Unlock()
	if first {
		b.Record(true)
	}
}

// Header waits for the establishment and returns the committed stream's
// header metadata, or the establishment's error.
func (cs *clientStream) Header() (metadata.MD, error) {
	w, err := cs.committed()
	if w == nil {
		return nil, err
	}
	return w.s.Header()
}

// Trailer returns the committed stream's trailer metadata or, when there
// is none, the last failed attempt's.
func (cs *clientStream) Trailer() metadata.MD {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.won != nil {
		return cs.won.s.Trailer()
	}
	return cs.trailer
}

// Context returns the committed stream's context or, before the commit, the
// caller's.
func (cs *clientStream) Context() context.Context {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.won != nil {
		return cs.won.s.Context()
	}
	return cs.ctx
}
