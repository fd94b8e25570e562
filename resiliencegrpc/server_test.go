package resiliencegrpc_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// retryDelay returns the google.rpc.RetryInfo delay of err's status, and
// whether it has one.
func retryDelay(err error) (time.Duration, bool) {
	for _, d := range status.Convert(err).Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return ri.GetRetryDelay().AsDuration(), true
		}
	}
	return 0, false
}

// A rate limiter's refusal is ResourceExhausted, with the wait for the next
// token as the pushback trailer and a RetryInfo detail; the handler does
// not run.
func TestServerRateLimitRefusal(t *testing.T) {
	fk := clock.NewFake()
	lim := ratelimit.New(0.5, 1, ratelimit.WithClock(fk), ratelimit.WithName("api"))
	srv := &flaky{}
	c := serve(t, srv, []grpc.ServerOption{grpc.UnaryInterceptor(resiliencegrpc.UnaryServerInterceptor(ratelimit.Policy[struct{}](lim)))})
	if _, err := c.UnaryCall(bounded(t), req("x")); err != nil {
		t.Fatalf("first call: %v", err)
	}
	var trailer metadata.MD
	_, err := c.UnaryCall(bounded(t), req("x"), grpc.Trailer(&trailer))
	delay, ok := retryDelay(err)
	if diff := cmp.Diff([]any{codes.ResourceExhausted, []string{"2000"}, 2 * time.Second, true, int64(1)},
		[]any{status.Code(err), trailer.Get(resiliencegrpc.PushbackKey), delay, ok, srv.hits.Load()}); diff != "" {
		t.Errorf("code, pushback, RetryInfo, server hits mismatch (-want +got):\n%s", diff)
	}
}

// The server's pushback drives the client's retry: it waits as long as the
// limiter asked, and then gets through.
func TestServerPushbackDrivesClientRetry(t *testing.T) {
	fk := clock.NewFake()
	lim := ratelimit.New(0.25, 1, ratelimit.WithClock(fk))
	srv := &flaky{}
	var waits []time.Duration
	p := retry.New[any](retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(time.Millisecond)), retry.WithClock(fk),
		retry.WithOnRetry(func(_ int, _ error, d time.Duration) { waits = append(waits, d) }))
	c := serve(t, srv, []grpc.ServerOption{grpc.UnaryInterceptor(resiliencegrpc.UnaryServerInterceptor(ratelimit.Policy[struct{}](lim)))},
		grpc.WithUnaryInterceptor(resiliencegrpc.UnaryClientInterceptor(p)))
	if _, err := c.UnaryCall(bounded(t), req("x")); err != nil {
		t.Fatalf("first call: %v", err)
	}
	err := advancing(t, fk, 1, 4*time.Second, func() error {
		_, err := c.UnaryCall(bounded(t), req("x"))
		return err
	})
	if err != nil {
		t.Fatalf("second call: %v", err)
	}
	if diff := cmp.Diff([]any{[]time.Duration{4 * time.Second}, int64(2)}, []any{waits, srv.hits.Load()}); diff != "" {
		t.Errorf("client waits, server hits mismatch (-want +got):\n%s", diff)
	}
}

// A full bulkhead refuses a stream with Unavailable and a pushback of 1s
// (it has no hint of its own), before the handler runs.
func TestServerBulkheadFullStream(t *testing.T) {
	gate := make(chan struct{})
	srv := &flaky{def: step{gate: gate, msgs: 1}, arrived: make(chan struct{}, 2)}
	bh := bulkhead.New(1)
	c := serve(t, srv, []grpc.ServerOption{grpc.StreamInterceptor(resiliencegrpc.StreamServerInterceptor(bulkhead.Policy[struct{}](bh)))})
	first, err := c.StreamingOutputCall(bounded(t), outputReq("m"))
	if err != nil {
		t.Fatalf("first stream: %v", err)
	}
	await(t, srv.arrived, "the first stream to reach the handler")
	second, err := c.StreamingOutputCall(bounded(t), outputReq("m"))
	if err != nil {
		t.Fatalf("second stream: %v", err)
	}
	_, err = second.Recv()
	if diff := cmp.Diff([]any{codes.Unavailable, []string{"1000"}, int64(1)}, []any{status.Code(err), second.Trailer().Get(resiliencegrpc.PushbackKey), srv.hits.Load()}); diff != "" {
		t.Errorf("code, pushback, handler runs mismatch (-want +got):\n%s", diff)
	}
	close(gate)
	if got, err := drain(first.Recv); err != nil || len(got) != 1 {
		t.Errorf("first stream: %v, %v; want one message", got, err)
	}
}

// A server-side breaker counts the handler's failures, not its answers,
// and refuses with Unavailable and the cooldown left as pushback.
func TestServerBreaker(t *testing.T) {
	fk := clock.NewFake()
	b := breaker.New(breaker.WithThreshold(2), breaker.WithCooldown(30*time.Second), breaker.WithClock(fk))
	srv := &flaky{script: []step{{code: codes.NotFound}, {code: codes.InvalidArgument}, {code: codes.Internal}, {code: codes.Unavailable}}}
	c := serve(t, srv, []grpc.ServerOption{grpc.UnaryInterceptor(resiliencegrpc.UnaryServerInterceptor(breaker.Policy[struct{}](b)))})
	var codesSeen []codes.Code
	for range 4 {
		_, err := c.UnaryCall(bounded(t), req("x"))
		codesSeen = append(codesSeen, status.Code(err))
	}
	var trailer metadata.MD
	_, err := c.UnaryCall(bounded(t), req("x"), grpc.Trailer(&trailer))
	want := []any{[]codes.Code{codes.NotFound, codes.InvalidArgument, codes.Internal, codes.Unavailable}, codes.Unavailable, []string{"30000"}, int64(4)}
	if diff := cmp.Diff(want, []any{codesSeen, status.Code(err), trailer.Get(resiliencegrpc.PushbackKey), srv.hits.Load()}); diff != "" {
		t.Errorf("codes, refusal code, pushback, handler runs mismatch (-want +got):\n%s", diff)
	}
}

// payloads counts the request messages a server reads.
type payloads struct{ n atomic.Int64 }

func (p *payloads) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (p *payloads) HandleRPC(_ context.Context, s stats.RPCStats) {
	if _, ok := s.(*stats.InPayload); ok {
		p.n.Add(1)
	}
}
func (p *payloads) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (p *payloads) HandleConn(context.Context, stats.ConnStats)                       {}

// The tap handle refuses a call before its message is read, with the
// pushback as a RetryInfo detail, which the client interceptor reads.
func TestInHandleRefusesBeforeReading(t *testing.T) {
	fk := clock.NewFake()
	lim := ratelimit.New(1, 1, ratelimit.WithClock(fk))
	read := &payloads{}
	srv := &flaky{}
	c := serve(t, srv, []grpc.ServerOption{grpc.InTapHandle(resiliencegrpc.InHandle(ratelimit.Policy[struct{}](lim))), grpc.StatsHandler(read)},
		grpc.WithUnaryInterceptor(resiliencegrpc.UnaryClientInterceptor(resilience.Policy[any]{})))
	if _, err := c.UnaryCall(bounded(t), req("x")); err != nil {
		t.Fatalf("first call: %v", err)
	}
	_, err := c.UnaryCall(bounded(t), req("x"))
	var se *resiliencegrpc.StatusError
	after := time.Duration(-1)
	if errorsAs(err, &se) {
		after = se.After
	}
	if diff := cmp.Diff([]any{codes.ResourceExhausted, time.Second, int64(1), int64(1)}, []any{status.Code(err), after, read.n.Load(), srv.hits.Load()}); diff != "" {
		t.Errorf("code, pushback seen by the client, messages read, handler runs mismatch (-want +got):\n%s", diff)
	}
}

// Keyed by a metadata key, one tenant's calls do not use up another's.
func TestKeyedLimitByMetadata(t *testing.T) {
	fk := clock.NewFake()
	k := ratelimit.NewKeyed[string](1, 1, ratelimit.WithClock(fk))
	srv := &flaky{}
	c := serve(t, srv, []grpc.ServerOption{grpc.InTapHandle(resiliencegrpc.InHandle(resilience.Policy[struct{}]{}, resiliencegrpc.WithKeyedLimit(resiliencegrpc.MetadataKey("tenant"), k)))})
	call := func(tenant string) codes.Code {
		ctx := metadata.AppendToOutgoingContext(bounded(t), "tenant", tenant)
		_, err := c.UnaryCall(ctx, req("x"))
		return status.Code(err)
	}
	got := []codes.Code{call("a"), call("a"), call("b"), call("b")}
	want := []codes.Code{codes.OK, codes.ResourceExhausted, codes.OK, codes.ResourceExhausted}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("codes of tenant a, a, b, b mismatch (-want +got):\n%s", diff)
	}
}

// Keyed by peer, the key is the peer's host: connections from other ports
// of one host share a bucket.
func TestKeyedLimitByPeer(t *testing.T) {
	k := ratelimit.NewKeyed[string](1, 1, ratelimit.WithClock(clock.NewFake()))
	h := resiliencegrpc.InHandle(resilience.Policy[struct{}]{}, resiliencegrpc.WithKeyedLimit(resiliencegrpc.PeerKey, k))
	from := func(addr string) error {
		tcp, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatalf("ResolveTCPAddr(%q): %v", addr, err)
		}
		ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: tcp})
		_, err = h(ctx, &tap.Info{FullMethodName: "/test.Service/Unary"})
		return err
	}
	got := []bool{from("10.0.0.1:1000") == nil, from("10.0.0.1:2000") == nil, from("10.0.0.2:1000") == nil}
	if diff := cmp.Diff([]bool{true, false, true}, got); diff != "" {
		t.Errorf("admitted from 10.0.0.1:1000, 10.0.0.1:2000, 10.0.0.2:1000 mismatch (-want +got):\n%s", diff)
	}
}

// Under WithKeyedLimit the server interceptors take each call's token
// from its key's bucket before p's guards: a refused call reaches neither
// p nor the handler, and is answered ResourceExhausted with the bucket's
// own pushback.
func TestServerInterceptorsKeyedLimit(t *testing.T) {
	byTenant := resiliencegrpc.MetadataKey("tenant")
	for _, kind := range []string{"unary", "stream"} {
		t.Run(kind, func(t *testing.T) {
			k := ratelimit.NewKeyed[string](ratelimit.Every(2*time.Second), 1, ratelimit.WithClock(clock.NewFake()))
			var inner, handled int
			spy := resilience.New("spy", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
				inner++
				return next.Call(ctx)
			})
			call := func(tenant string) error {
				ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("tenant", tenant))
				if kind == "unary" {
					_, err := resiliencegrpc.UnaryServerInterceptor(spy, resiliencegrpc.WithKeyedLimit(byTenant, k))(ctx, "request",
						&grpc.UnaryServerInfo{FullMethod: "/test.Service/Unary"}, func(context.Context, any) (any, error) { handled++; return "ok", nil })
					return err
				}
				return resiliencegrpc.StreamServerInterceptor(spy, resiliencegrpc.WithKeyedLimit(byTenant, k))(nil, &fakeServerStream{ctx: ctx},
					&grpc.StreamServerInfo{FullMethod: "/test.Service/Stream"}, func(any, grpc.ServerStream) error { handled++; return nil })
			}
			errs := []error{call("a"), call("a"), call("b")}
			got := []codes.Code{status.Code(errs[0]), status.Code(errs[1]), status.Code(errs[2])}
			if diff := cmp.Diff([]any{[]codes.Code{codes.OK, codes.ResourceExhausted, codes.OK}, 2, 2},
				[]any{got, inner, handled}); diff != "" {
				t.Errorf("codes of a, a, b; calls into p; handler runs mismatch (-want +got):\n%s", diff)
			}
			if after, ok := retryDelay(errs[1]); !ok || after != 2*time.Second {
				t.Errorf("RetryInfo of the refusal %v, %v; want 2s", after, ok)
			}
		})
	}
}

func TestPeerKey(t *testing.T) {
	tcp := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 5555}})
	v6 := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.ParseIP("::1"), Port: 80}})
	unix := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.UnixAddr{Name: "/run/s.sock", Net: "unix"}})
	got := []string{resiliencegrpc.PeerKey(tcp), resiliencegrpc.PeerKey(v6), resiliencegrpc.PeerKey(unix), resiliencegrpc.PeerKey(context.Background())}
	if diff := cmp.Diff([]string{"10.1.2.3", "::1", "/run/s.sock", ""}, got); diff != "" {
		t.Errorf("PeerKey mismatch (-want +got):\n%s", diff)
	}
}

func TestWithKeyedLimitPanics(t *testing.T) {
	k := ratelimit.NewKeyed[string](1, 1)
	for _, tt := range []struct {
		want string
		f    func()
	}{
		{"resiliencegrpc: WithKeyedLimit key function must not be nil", func() { resiliencegrpc.WithKeyedLimit(nil, k) }},
		{"resiliencegrpc: WithKeyedLimit limits must not be nil", func() { resiliencegrpc.WithKeyedLimit(resiliencegrpc.PeerKey, nil) }},
	} {
		got := func() (msg any) {
			defer func() { msg = recover() }()
			tt.f()
			return nil
		}()
		if got != tt.want {
			t.Errorf("panic %v, want %q", got, tt.want)
		}
	}
}

// serverKind is one of the server interceptors, as a function that runs
// one call through p to handler and returns what the interceptor returned:
// the unary reply, or the message the stream handler sent, and the error.
type serverKind struct {
	name string
	call func(p resilience.Policy[struct{}], ctx context.Context, handler func(context.Context) (any, error)) (any, error)
}

var serverKinds = []serverKind{
	{"unary", func(p resilience.Policy[struct{}], ctx context.Context, handler func(context.Context) (any, error)) (any, error) {
		return resiliencegrpc.UnaryServerInterceptor(p)(ctx, "request", &grpc.UnaryServerInfo{FullMethod: "/test.Service/Unary"},
			func(ctx context.Context, _ any) (any, error) { return handler(ctx) })
	}},
	{"stream", func(p resilience.Policy[struct{}], ctx context.Context, handler func(context.Context) (any, error)) (any, error) {
		ss := &fakeServerStream{ctx: ctx}
		err := resiliencegrpc.StreamServerInterceptor(p)(nil, ss, &grpc.StreamServerInfo{FullMethod: "/test.Service/Stream"},
			func(_ any, ss grpc.ServerStream) error {
				v, err := handler(ss.Context())
				if v != nil {
					_ = ss.SendMsg(v)
				}
				return err
			})
		return ss.sent, err
	}},
}

// fakeServerStream is a grpc.ServerStream of a call made without gRPC: it
// keeps the last message sent and the trailer.
type fakeServerStream struct {
	grpc.ServerStream // nil: the methods below are the ones the interceptor and the tests use
	ctx               context.Context
	sent              any
	trailer           metadata.MD
}

func (s *fakeServerStream) Context() context.Context  { return s.ctx }
func (s *fakeServerStream) SendMsg(m any) error       { s.sent = m; return nil }
func (s *fakeServerStream) SetTrailer(md metadata.MD) { s.trailer = metadata.Join(s.trailer, md) }

// forEachServerKind runs test for each server interceptor, in a synctest
// bubble: time is fake, and a call that never returns is reported at once.
func forEachServerKind(t *testing.T, test func(t *testing.T, k serverKind)) {
	for _, k := range serverKinds {
		t.Run(k.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { test(t, k) })
		})
	}
}

// spyErrs is a layer that sends what each call of its next returned to
// errs.
func spyErrs(errs chan<- error) resilience.Policy[struct{}] {
	return resilience.New("spy", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
		v, err := next.Call(ctx)
		errs <- err
		return v, err
	})
}

// isRefusedAndPermanent reports whether err is the error of an op that
// the interceptor did not run: a refusal (a breaker does not count it)
// that no retry retries.
func isRefusedAndPermanent(err error) bool {
	return errors.Is(err, resilience.ErrRefused) && resilience.IsPermanent(err)
}

// A handler answers once, on one stream: a retry's second call of the op
// is refused, marked permanent so that the retry stops, and a refusal so
// that the breaker under the retry counts the handler's one failure only.
// The caller gets the handler's answer.
func TestServerInterceptorRetryRunsTheHandlerOnce(t *testing.T) {
	forEachServerKind(t, func(t *testing.T, k serverKind) {
		brk := breaker.New(breaker.WithThreshold(2), breaker.WithCooldown(time.Minute))
		errs := make(chan error, 3)
		calls := 0
		p := resilience.Then(retry.New[struct{}](retry.WithAttempts(3)), spyErrs(errs), breaker.Policy[struct{}](brk))
		reply, err := k.call(p, context.Background(), func(context.Context) (any, error) {
			calls++
			return "partial", status.Error(codes.Unavailable, "down")
		})
		if diff := cmp.Diff([]any{1, "partial", codes.Unavailable, "down"}, []any{calls, reply, status.Code(err), status.Convert(err).Message()}); diff != "" {
			t.Errorf("handler runs, reply, code, message mismatch (-want +got):\n%s", diff)
		}
		close(errs)
		var seen []error
		for err := range errs {
			seen = append(seen, err)
		}
		if len(seen) != 2 || status.Code(seen[0]) != codes.Unavailable || !isRefusedAndPermanent(seen[1]) {
			t.Errorf("the op's calls returned %v, want the handler's Unavailable and then a permanent refusal", seen)
		}
		if diff := cmp.Diff([]any{breaker.Closed, int64(1)}, []any{brk.State(), int64(brk.Counts().Failures)}); diff != "" {
			t.Errorf("breaker state, failures mismatch (-want +got):\n%s", diff)
		}
	})
}

// A hedge's second attempt, started while the handler runs, is refused at
// once, without running the handler a second time on the same call.
func TestServerInterceptorHedgeRunsTheHandlerOnce(t *testing.T) {
	forEachServerKind(t, func(t *testing.T, k serverKind) {
		errs := make(chan error, 2)
		release := make(chan struct{})
		var calls atomic.Int64
		p := resilience.Then(hedge.New[struct{}](time.Second), spyErrs(errs))
		done := goCall(k, p, func(context.Context) (any, error) {
			if calls.Add(1) == 1 {
				<-release
			}
			return "x", nil
		})
		time.Sleep(2 * time.Second) // the hedge's delay passes
		synctest.Wait()
		select {
		case err := <-errs:
			if !isRefusedAndPermanent(err) {
				t.Errorf("the hedge's second attempt returned %v, want a permanent refusal", err)
			}
		default:
			t.Error("the hedge's second attempt has not returned while the first runs")
		}
		close(release)
		r := <-done
		if diff := cmp.Diff([]any{int64(1), "x", nil}, []any{calls.Load(), r.reply, r.err}, cmpErrors); diff != "" {
			t.Errorf("handler runs, reply, error mismatch (-want +got):\n%s", diff)
		}
	})
}

// callResult is what a server interceptor returned.
type callResult struct {
	reply any
	err   error
}

// goCall runs one call of k through p to handler in a goroutine of its
// own, and returns the channel on which its result comes.
func goCall(k serverKind, p resilience.Policy[struct{}], handler func(context.Context) (any, error)) <-chan callResult {
	done := make(chan callResult, 1)
	go func() {
		reply, err := k.call(p, context.Background(), handler)
		done <- callResult{reply, err}
	}()
	return done
}

// cmpErrors compares errors by their text.
var cmpErrors = cmp.Comparer(func(a, b error) bool { return a == nil && b == nil || a != nil && b != nil && a.Error() == b.Error() })

// A timeout that abandons its op returns while the handler runs; the
// interceptor must not: gRPC ends the call when it returns, and the
// handler still uses it. The caller gets the handler's answer.
func TestServerInterceptorWaitsForAnAbandonedHandler(t *testing.T) {
	forEachServerKind(t, func(t *testing.T, k serverKind) {
		release, returned := make(chan struct{}), make(chan struct{})
		p := timeout.New[struct{}](time.Second, timeout.WithAbandon(true))
		done := goCall(k, p, func(context.Context) (any, error) {
			defer close(returned)
			<-release
			return "late", nil
		})
		time.Sleep(2 * time.Second) // the timeout expires
		synctest.Wait()
		var r callResult
		select {
		case r = <-done:
			t.Error("the interceptor returned while the handler still runs")
			close(release)
		default:
			close(release)
			r = <-done
		}
		<-returned
		if diff := cmp.Diff([]any{"late", nil}, []any{r.reply, r.err}, cmpErrors); diff != "" {
			t.Errorf("reply, error mismatch (-want +got):\n%s", diff)
		}
	})
}

// A fallback that turns the open breaker's refusal into a success leaves
// the call unanswered: the caller must not get an empty OK.
func TestServerInterceptorPolicyThatSkipsTheHandlerIsInternal(t *testing.T) {
	forEachServerKind(t, func(t *testing.T, k serverKind) {
		brk := breaker.New()
		brk.ForceOpen()
		calls := 0
		p := resilience.Then(
			resilience.Fallback(func(context.Context, error) (struct{}, error) { return struct{}{}, nil }),
			breaker.Policy[struct{}](brk),
		)
		reply, err := k.call(p, context.Background(), func(context.Context) (any, error) {
			calls++
			return "ok", nil
		})
		want := []any{0, nil, codes.Internal, "resiliencegrpc: the server interceptor's policy returned without calling the handler (a fallback cannot answer a call)"}
		if diff := cmp.Diff(want, []any{calls, reply, status.Code(err), status.Convert(err).Message()}); diff != "" {
			t.Errorf("handler runs, reply, code, message mismatch (-want +got):\n%s", diff)
		}
	})
}

// A policy that gives up before its op has started (as a timeout that
// abandons its op may) gets its refusal answered; the op, started later,
// must not run the handler on a call that has ended.
func TestServerInterceptorOpCalledAfterReturnIsRefused(t *testing.T) {
	forEachServerKind(t, func(t *testing.T, k serverKind) {
		start := make(chan struct{})
		errs := make(chan error, 1)
		late := resilience.New("late", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
			go func() {
				<-start
				_, err := next.Call(ctx)
				errs <- err
			}()
			return struct{}{}, resilience.Refuse(bulkhead.ErrFull, "late", -1)
		})
		var calls atomic.Int64
		_, err := k.call(late, context.Background(), func(context.Context) (any, error) {
			calls.Add(1)
			return "late", nil
		})
		if diff := cmp.Diff([]any{codes.Unavailable, "unavailable: retry after 1s"}, []any{status.Code(err), status.Convert(err).Message()}); diff != "" {
			t.Errorf("the interceptor's code, message mismatch (-want +got):\n%s", diff)
		}
		close(start)
		if err := <-errs; !isRefusedAndPermanent(err) || calls.Load() != 0 {
			t.Errorf("the late op returned %v and ran the handler %d times, want a permanent refusal and never", err, calls.Load())
		}
	})
}

// A policy that runs its op in another goroutine and then panics: the
// panic goes on to gRPC, but only once the handler is done with the call.
func TestServerInterceptorWaitsForTheHandlerWhenThePolicyPanics(t *testing.T) {
	forEachServerKind(t, func(t *testing.T, k serverKind) {
		started, release, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
		crash := resilience.New("crash", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
			go next.Call(ctx)
			<-started
			panic("policy bug")
		})
		done := make(chan any, 1)
		go func() {
			defer func() { done <- recover() }()
			_, _ = k.call(crash, context.Background(), func(context.Context) (any, error) {
				defer close(returned)
				close(started)
				<-release
				return "late", nil
			})
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Error("the interceptor panicked on while the handler still runs")
			close(release)
		default:
			close(release)
			if r := <-done; r != "policy bug" {
				t.Errorf("recovered %v, want the policy's panic", r)
			}
		}
		<-returned
	})
}

// A call through a server interceptor costs 2 allocations (its state and
// its op) beyond what p and the handler allocate.
func TestServerInterceptorAllocs(t *testing.T) {
	p := bulkhead.Policy[struct{}](bulkhead.New(1))
	ctx := context.Background()
	unary := resiliencegrpc.UnaryServerInterceptor(p)
	info := &grpc.UnaryServerInfo{FullMethod: "/test.Service/Unary"}
	handler := func(_ context.Context, req any) (any, error) { return req, nil }
	stream := resiliencegrpc.StreamServerInterceptor(p)
	ss := &fakeServerStream{ctx: ctx}
	sinfo := &grpc.StreamServerInfo{FullMethod: "/test.Service/Stream"}
	shandler := func(any, grpc.ServerStream) error { return nil }
	got := []float64{
		testing.AllocsPerRun(1000, func() { _, _ = unary(ctx, info, info, handler) }),
		testing.AllocsPerRun(1000, func() { _ = stream(nil, ss, sinfo, shandler) }),
	}
	if diff := cmp.Diff([]float64{2, 2}, got); diff != "" {
		t.Errorf("allocations per unary, stream call mismatch (-want +got):\n%s", diff)
	}
}
