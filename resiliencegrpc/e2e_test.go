package resiliencegrpc_test

import (
	"net"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// End to end on a real TCP server on the loopback: the server's tap handle
// limits each client host; the client retries failures with the server's
// pushback, through a breaker and a timeout; a committed stream that the
// server resets mid-way is not replayed and is recorded on the breaker.
func TestEndToEndTCP(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	srv := &flaky{script: []step{
		{code: codes.Unavailable, pushback: "10"}, {code: codes.ResourceExhausted, pushback: "10"}, {}, // unary: 2 failures, then OK
		{msgs: 2, code: codes.Internal}, // stream: reset after 2 messages
	}}
	limits := ratelimit.NewKeyed[string](1000, 100)
	s := grpc.NewServer(grpc.InTapHandle(resiliencegrpc.InHandle(resilience.Policy[struct{}]{}, resiliencegrpc.WithKeyedLimit(resiliencegrpc.PeerKey, limits))))
	testpb.RegisterTestServiceServer(s, srv)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = s.Serve(lis)
	}()
	defer func() {
		s.Stop()
		await(t, served, "the server to stop")
	}()

	b := breaker.New(breaker.WithThreshold(10))
	var waits []time.Duration // the unary call's retries are made one after another
	p := resilience.Then(
		retry.New[any](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0)), retry.WithMaxElapsed(5*time.Second),
			retry.WithOnRetry(func(_ int, _ error, d time.Duration) { waits = append(waits, d) })),
		breaker.Policy[any](b),
		timeout.New[any](5*time.Second),
	)
	cc, err := grpc.NewClient(lis.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDisableRetry(),
		grpc.WithUnaryInterceptor(resiliencegrpc.UnaryClientInterceptor(p)),
		grpc.WithStreamInterceptor(resiliencegrpc.StreamClientInterceptor(p, resiliencegrpc.WithBreaker(b))))
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	defer cc.Close()
	c := liveClient{TestServiceClient: testpb.NewTestServiceClient(cc), t: t}

	resp, err := c.UnaryCall(bounded(t), req("over tcp"))
	if err != nil {
		t.Fatalf("UnaryCall: %v", err)
	}
	if diff := cmp.Diff([]time.Duration{10 * time.Millisecond, 10 * time.Millisecond}, waits); diff != "" {
		t.Errorf("retry waits (the pushbacks) mismatch (-want +got):\n%s", diff)
	}
	stream, err := c.StreamingOutputCall(bounded(t), outputReq("s"))
	if err != nil {
		t.Fatalf("StreamingOutputCall: %v", err)
	}
	got, err := drain(stream.Recv)
	counts := b.Counts()
	want := []any{"over tcp", []string{"s0", "s1"}, codes.Internal, int64(4), uint64(3), uint64(2)}
	if diff := cmp.Diff(want, []any{string(resp.GetPayload().GetBody()), got, status.Code(err), srv.hits.Load(), counts.Failures, counts.Successes}); diff != "" {
		t.Errorf("reply, stream messages, stream end, server hits, breaker failures, successes mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(1, limits.Len()); diff != "" {
		t.Errorf("rate-limit keys (one client host) mismatch (-want +got):\n%s", diff)
	}
}
