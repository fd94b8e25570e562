package resiliencegrpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// A client whose unary calls retry failures, through a breaker and a
// per-attempt timeout. The server fails twice, then answers.
func ExampleUnaryClientInterceptor() {
	srv := &flaky{script: []step{{code: codes.Unavailable}, {code: codes.Internal, pushback: "5"}}}
	deps := breaker.New(breaker.WithName("deps"))
	p := resilience.Then(
		retry.New[any](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0)), retry.WithMaxElapsed(2*time.Second)),
		breaker.Policy[any](deps),
		timeout.New[any](time.Second),
	)
	c, stop, err := start(srv, nil, grpc.WithUnaryInterceptor(resiliencegrpc.UnaryClientInterceptor(p)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	resp, err := c.UnaryCall(context.Background(), req("hello"))
	fmt.Printf("reply %q, err %v; server hit %d times; breaker %v\n", resp.GetPayload().GetBody(), err, srv.hits.Load(), deps.State())
	// Output: reply "hello", err <nil>; server hit 3 times; breaker closed
}

// A server-streaming call whose first stream fails before the server's
// first message: the retry opens it again. The second fails after its
// first message: it is committed, so it is not replayed, and its failure is
// recorded on the breaker.
func ExampleStreamClientInterceptor() {
	srv := &flaky{script: []step{{code: codes.Unavailable}, {msgs: 2}, {msgs: 1, code: codes.Unavailable}}}
	deps := breaker.New()
	p := resilience.Then(retry.New[any](retry.WithBackoff(backoff.Constant(0))), breaker.Policy[any](deps))
	c, stop, err := start(srv, nil, grpc.WithStreamInterceptor(resiliencegrpc.StreamClientInterceptor(p, resiliencegrpc.WithBreaker(deps))))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	for range 2 {
		s, err := c.StreamingOutputCall(context.Background(), outputReq("m"))
		if err != nil {
			fmt.Println(err)
			return
		}
		for i := 0; ; i++ {
			if i == maxMsgs {
				fmt.Println("the stream did not end")
				break
			}
			m, err := s.Recv()
			if err == io.EOF {
				fmt.Println("end")
				break
			}
			if err != nil {
				fmt.Println("failed:", status.Code(err))
				break
			}
			fmt.Printf("got %s\n", m.GetPayload().GetBody())
		}
	}
	// Two failures: the first stream's, through the policy, and the
	// committed stream's, recorded.
	fmt.Printf("server hit %d times; breaker counted %d failures\n", srv.hits.Load(), deps.Counts().Failures)
	// Output:
	// got m0
	// got m1
	// end
	// got m0
	// failed: Unavailable
	// server hit 3 times; breaker counted 2 failures
}

// A hedge starts another attempt as soon as one fails. This stream sent
// 384 KiB before the server failed it, more than ReplayLimit: it cannot be
// sent again, so the hedge's second attempt is refused with
// ErrNotReplayable, and the server sees one stream.
func ExampleErrNotReplayable() {
	srv := &flaky{def: step{code: codes.Unavailable, recv: 3}}
	p := hedge.New[any](time.Minute)
	c, stop, err := start(srv, nil, grpc.WithStreamInterceptor(resiliencegrpc.StreamClientInterceptor(p)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	s, err := c.FullDuplexCall(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 3 {
		_ = s.Send(&testpb.StreamingOutputCallRequest{Payload: &testpb.Payload{Body: make([]byte, 128<<10)}})
	}
	_, err = s.Recv()
	fmt.Println(errors.Is(err, resiliencegrpc.ErrNotReplayable), status.Code(err), srv.hits.Load())
	fmt.Println(err)
	// Output:
	// true Unavailable 1
	// hedge: all 2 attempts failed: resiliencegrpc: Unavailable: flaky: Unavailable; resiliencegrpc: stream cannot be replayed (it sent too much, or a message that is not a proto.Message)
}

// WithBreaker names the breaker inside the policy: its half-open trials,
// which the timeout bounds, wait for a ready connection, and a committed
// stream's failure is recorded on it (see the stream interceptor's
// example).
func ExampleWithBreaker() {
	deps := breaker.New(breaker.WithName("deps"))
	p := resilience.Then(breaker.Policy[any](deps), timeout.New[any](2*time.Second))
	_ = grpc.WithUnaryInterceptor(resiliencegrpc.UnaryClientInterceptor(p, resiliencegrpc.WithBreaker(deps)))
	_ = grpc.WithStreamInterceptor(resiliencegrpc.StreamClientInterceptor(p, resiliencegrpc.WithBreaker(deps)))
	fmt.Println(deps.Name())
	// Output: deps
}

// One method gets retries; the others are called once.
func ExampleWithMethod() {
	srv := &flaky{def: step{code: codes.Unavailable}}
	retried := retry.New[any](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0)))
	c, stop, err := start(srv, nil, grpc.WithUnaryInterceptor(resiliencegrpc.UnaryClientInterceptor(
		resilience.Policy[any]{}, // the default: call once
		resiliencegrpc.WithMethod("/grpc.testing.TestService/UnaryCall", retried),
	)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	_, _ = c.EmptyCall(context.Background(), &testpb.Empty{})
	fmt.Println("EmptyCall hits:", srv.hits.Load())
	_, _ = c.UnaryCall(context.Background(), req("x"))
	fmt.Println("UnaryCall hits:", srv.hits.Load()-1)
	// Output:
	// EmptyCall hits: 1
	// UnaryCall hits: 3
}

// NotFound is an answer by default; this client counts it as a failure and
// retries it (a replica that has not seen a write yet, say).
func ExampleWithClassify() {
	srv := &flaky{script: []step{{code: codes.NotFound}}}
	notFoundFails := func(s *status.Status) bool { return s.Code() == codes.NotFound || resiliencegrpc.IsFailure(s) }
	p := retry.New[any](retry.WithBackoff(backoff.Constant(0)))
	c, stop, err := start(srv, nil, grpc.WithUnaryInterceptor(resiliencegrpc.UnaryClientInterceptor(p, resiliencegrpc.WithClassify(notFoundFails))))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	_, err = c.UnaryCall(context.Background(), req("x"))
	fmt.Printf("err %v; server hit %d times\n", err, srv.hits.Load())
	// Output: err <nil>; server hit 2 times
}

// A server that admits 1 call at once and refills a token every 2 s: the
// second call is refused with ResourceExhausted and a pushback.
func ExampleUnaryServerInterceptor() {
	lim := ratelimit.New(0.5, 1, ratelimit.WithName("api"), ratelimit.WithClock(clock.NewFake())) // a fake clock: time stands still
	srv := &flaky{}
	c, stop, err := start(srv, []grpc.ServerOption{grpc.UnaryInterceptor(resiliencegrpc.UnaryServerInterceptor(ratelimit.Policy[struct{}](lim)))})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	for range 2 {
		var trailer metadata.MD
		_, err := c.UnaryCall(context.Background(), req("x"), grpc.Trailer(&trailer))
		fmt.Printf("%v, pushback %q ms\n", status.Code(err), trailer.Get(resiliencegrpc.PushbackKey))
	}
	// Output:
	// OK, pushback [] ms
	// ResourceExhausted, pushback ["2000"] ms
}

// A server whose breaker is forced open refuses every stream with
// Unavailable and a pushback of -1: do not retry.
func ExampleStreamServerInterceptor() {
	db := breaker.New(breaker.WithName("db"))
	db.ForceOpen()
	c, stop, err := start(&flaky{}, []grpc.ServerOption{grpc.StreamInterceptor(resiliencegrpc.StreamServerInterceptor(breaker.Policy[struct{}](db)))})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	s, err := c.FullDuplexCall(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = s.Recv()
	fmt.Printf("%v %q, pushback %q\n", status.Code(err), status.Convert(err).Message(), s.Trailer().Get(resiliencegrpc.PushbackKey))
	// Output: Unavailable "unavailable: retry never", pushback ["-1"]
}

// A tap handle refuses over-limit calls before gRPC reads their message;
// the client's interceptor sees the pushback.
func ExampleInHandle() {
	lim := ratelimit.New(1, 1, ratelimit.WithClock(clock.NewFake())) // a fake clock: time stands still
	c, stop, err := start(&flaky{},
		[]grpc.ServerOption{grpc.InTapHandle(resiliencegrpc.InHandle(ratelimit.Policy[struct{}](lim)))},
		grpc.WithUnaryInterceptor(resiliencegrpc.UnaryClientInterceptor(resilience.Policy[any]{})))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	for range 2 {
		_, err := c.UnaryCall(context.Background(), req("x"))
		var se *resiliencegrpc.StatusError
		if errors.As(err, &se) {
			fmt.Printf("%v, retry after %v\n", se.Status.Code(), se.After)
		} else {
			fmt.Println(status.Code(err))
		}
	}
	// Output:
	// OK
	// ResourceExhausted, retry after 1s
}

// Each tenant, named by a metadata key, has a bucket of its own, here in
// gRPC's tap (grpc.InTapHandle), before a call's message is read.
func ExampleWithKeyedLimit() {
	tenants := ratelimit.NewKeyed[string](1, 1, ratelimit.WithClock(clock.NewFake()))
	tapHandle := resiliencegrpc.InHandle(resilience.Policy[struct{}]{}, resiliencegrpc.WithKeyedLimit(resiliencegrpc.MetadataKey("tenant"), tenants))
	for _, tenant := range []string{"a", "a", "b"} {
		ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("tenant", tenant))
		_, err := tapHandle(ctx, &tap.Info{FullMethodName: "/shop.Orders/Place"})
		fmt.Printf("tenant %s: %v\n", tenant, status.Code(err))
	}
	// Output:
	// tenant a: OK
	// tenant a: ResourceExhausted
	// tenant b: OK
}

func ExamplePeerKey() {
	ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 52114}})
	fmt.Println(resiliencegrpc.PeerKey(ctx))
	// Output: 10.0.0.7
}

func ExampleMetadataKey() {
	key := resiliencegrpc.MetadataKey("x-tenant")
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("X-Tenant", "acme"))
	fmt.Printf("%q %q\n", key(ctx), key(context.Background()))
	// Output: "acme" ""
}

func ExampleRefusalStatus() {
	refusal := resilience.Refuse(ratelimit.ErrLimited, "api", 1500*time.Millisecond)
	st, trailer := resiliencegrpc.RefusalStatus(refusal)
	fmt.Printf("%v %q %v\n", st.Code(), st.Message(), trailer.Get(resiliencegrpc.PushbackKey))
	named, _ := resiliencegrpc.RefusalStatus(refusal, resiliencegrpc.WithGuardNames())
	fmt.Printf("%q\n", named.Message())
	// Output:
	// ResourceExhausted "resource exhausted: retry after 1.5s" [1500]
	// "ratelimit: limited (api): retry after 1.5s"
}

func ExampleParsePushback() {
	for _, v := range [][]string{{"250"}, {"-1"}, {"soon"}, nil} {
		d, ok := resiliencegrpc.ParsePushback(v)
		fmt.Println(v, d == resilience.Never, d, ok)
	}
	// Output:
	// [250] false 250ms true
	// [-1] true 2562047h47m16.854775807s true
	// [soon] true 2562047h47m16.854775807s true
	// [] false 0s false
}

func ExampleIsFailure() {
	for _, c := range []codes.Code{codes.Unavailable, codes.NotFound, codes.Internal, codes.InvalidArgument} {
		fmt.Println(c, resiliencegrpc.IsFailure(status.New(c, "")))
	}
	// Output:
	// Unavailable true
	// NotFound false
	// Internal true
	// InvalidArgument false
}

// A failure reaches the policies as a *StatusError; status.Code sees its
// status through the retry's error.
func ExampleStatusError() {
	err := fmt.Errorf("retry: gave up after 3 attempts: %w",
		&resiliencegrpc.StatusError{Status: status.New(codes.Unavailable, "overloaded"), After: 2 * time.Second})
	after, _ := resilience.RetryAfter(err)
	fmt.Println(err)
	fmt.Println(status.Code(err), after)
	// Output:
	// retry: gave up after 3 attempts: resiliencegrpc: Unavailable: overloaded (retry after 2s)
	// Unavailable 2s
}
