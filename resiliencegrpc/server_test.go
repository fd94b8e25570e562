package resiliencegrpc_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
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
	c := serve(t, srv, []grpc.ServerOption{grpc.InTapHandle(resiliencegrpc.InHandle(resiliencegrpc.KeyedLimit[struct{}](k, resiliencegrpc.MetadataKey("tenant"))))})
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
	p := resiliencegrpc.KeyedLimit[struct{}](k, resiliencegrpc.PeerKey)
	from := func(addr string) error {
		tcp, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatalf("ResolveTCPAddr(%q): %v", addr, err)
		}
		ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: tcp})
		_, err = p.Do(ctx, func(context.Context) (struct{}, error) { return struct{}{}, nil })
		return err
	}
	got := []bool{from("10.0.0.1:1000") == nil, from("10.0.0.1:2000") == nil, from("10.0.0.2:1000") == nil}
	if diff := cmp.Diff([]bool{true, false, true}, got); diff != "" {
		t.Errorf("admitted from 10.0.0.1:1000, 10.0.0.1:2000, 10.0.0.2:1000 mismatch (-want +got):\n%s", diff)
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

func TestKeyedLimitPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Errorf("KeyedLimit(nil, nil) did not panic")
		}
	}()
	resiliencegrpc.KeyedLimit[struct{}](nil, nil)
}
