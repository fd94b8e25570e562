package resiliencegrpc_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	grpcbackoff "google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// reconnectBackoff is the client's wait between connection attempts in
// the restart tests: short, so that they run fast, and long enough that a
// call made just after the server is back finds the connection still in
// its backoff.
const reconnectBackoff = 500 * time.Millisecond

// outage is a server on real TCP loopback (bufconn dials have no
// reconnect backoff) that a test stops and starts again on the same
// address, and a client of it whose unary and stream interceptors run
// through a breaker of threshold 1 on a fake clock, given by WithBreaker.
type outage struct {
	t    *testing.T
	addr string
	srv  *grpc.Server
	done chan struct{}
	cc   *grpc.ClientConn
	c    testpb.TestServiceClient
	b    *breaker.Breaker
	fk   *clock.Fake
}

func newOutage(t *testing.T) *outage {
	t.Helper()
	o := &outage{t: t, fk: clock.NewFake()}
	o.start("127.0.0.1:0")
	o.b = breaker.New(breaker.WithThreshold(1), breaker.WithCooldown(time.Minute), breaker.WithClock(o.fk))
	p := breaker.Policy[any](o.b)
	cc, err := grpc.NewClient("passthrough:///"+o.addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDisableRetry(),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           grpcbackoff.Config{BaseDelay: reconnectBackoff, Multiplier: 1, MaxDelay: reconnectBackoff},
			MinConnectTimeout: time.Second,
		}),
		grpc.WithUnaryInterceptor(resiliencegrpc.UnaryClientInterceptor(p, resiliencegrpc.WithBreaker(o.b))),
		grpc.WithStreamInterceptor(resiliencegrpc.StreamClientInterceptor(p, resiliencegrpc.WithBreaker(o.b))),
	)
	if err != nil {
		t.Fatalf("grpc.NewClient: %v", err)
	}
	o.cc, o.c = cc, liveClient{TestServiceClient: testpb.NewTestServiceClient(cc), t: t}
	t.Cleanup(func() {
		cc.Close()
		o.stop()
	})
	return o
}

// start serves on addr ("127.0.0.1:0" for a free port).
func (o *outage) start(addr string) {
	o.t.Helper()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		o.t.Fatalf("listen on %s: %v", addr, err)
	}
	o.addr = lis.Addr().String()
	o.srv = grpc.NewServer()
	testpb.RegisterTestServiceServer(o.srv, &flaky{})
	o.done = make(chan struct{})
	go func(s *grpc.Server, done chan struct{}) {
		defer close(done)
		_ = s.Serve(lis)
	}(o.srv, o.done)
}

func (o *outage) stop() {
	if o.srv != nil {
		o.srv.Stop()
		<-o.done
		o.srv = nil
	}
}

// down stops the server, trips the breaker with a call that fails, and
// waits (at most 10 s) for the connection to be in its reconnect backoff
// (TransientFailure).
func (o *outage) down() {
	o.t.Helper()
	o.stop()
	ctx := bounded(o.t)
	for i := 0; o.b.State() != breaker.Open; i++ {
		if i == 100 {
			o.t.Fatalf("the breaker is %v after 100 calls to a stopped server", o.b.State())
		}
		_, _ = o.c.UnaryCall(ctx, req("x"))
	}
	for s := o.cc.GetState(); s != connectivity.TransientFailure; s = o.cc.GetState() {
		if !o.cc.WaitForStateChange(ctx, s) {
			o.t.Fatalf("the connection stayed %v", s)
		}
	}
}

// halfOpen moves the fake clock past the cooldown and checks that the
// connection is still in its backoff.
func (o *outage) halfOpen() {
	o.t.Helper()
	o.fk.Advance(time.Minute)
	if s := o.cc.GetState(); s != connectivity.TransientFailure {
		o.t.Fatalf("the connection is %v before the trial, want TransientFailure (its reconnect backoff)", s)
	}
	if s := o.b.State(); s != breaker.HalfOpen {
		o.t.Fatalf("the breaker is %v before the trial, want half-open", s)
	}
}

// A half-open trial made while the connection is in its reconnect backoff
// waits for the connection to be ready, within its deadline, rather than
// failing at once: the server is back, so the trial succeeds and the
// breaker closes.
func TestTrialWaitsForReadyConnection(t *testing.T) {
	for _, kind := range []string{"unary", "stream"} {
		t.Run(kind, func(t *testing.T) {
			o := newOutage(t)
			o.down()
			o.start(o.addr)
			o.halfOpen()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var err error
			switch kind {
			case "unary":
				_, err = o.c.UnaryCall(ctx, req("x"))
			case "stream":
				var s grpc.ServerStreamingClient[testpb.StreamingOutputCallResponse]
				if s, err = o.c.StreamingOutputCall(ctx, outputReq("m")); err == nil {
					_, err = drain(s.Recv)
				}
			}
			if diff := cmp.Diff([]any{codes.OK, breaker.Closed}, []any{status.Code(err), o.b.State()}); diff != "" {
				t.Errorf("the trial's code (%v), breaker state mismatch (-want +got):\n%s", err, diff)
			}
		})
	}
}

// A trial waits no longer than its own deadline: with the server still
// down it fails with DeadlineExceeded when its deadline passes. A trial
// without a deadline does not wait: it fails at once, as any call.
func TestTrialWaitIsBoundedByItsDeadline(t *testing.T) {
	o := newOutage(t)
	o.down()
	o.halfOpen()
	_, err := o.c.UnaryCall(context.Background(), req("x"))
	if diff := cmp.Diff([]any{codes.Unavailable, breaker.Open}, []any{status.Code(err), o.b.State()}); diff != "" {
		t.Errorf("without a deadline: the trial's code (%v), breaker state mismatch (-want +got):\n%s", err, diff)
	}

	o.fk.Advance(time.Minute)
	const deadline = 200 * time.Millisecond
	start := time.Now() // before the deadline is set, which is measured from its own now
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	_, err = o.c.UnaryCall(ctx, req("x"))
	took := time.Since(start)
	if diff := cmp.Diff([]any{codes.DeadlineExceeded, breaker.Open}, []any{status.Code(err), o.b.State()}); diff != "" {
		t.Errorf("with a deadline: the trial's code (%v), breaker state mismatch (-want +got):\n%s", err, diff)
	}
	if took < deadline || took > 5*time.Second {
		t.Errorf("the trial took %v, want its deadline, %v (and well under 5s)", took, deadline)
	}
}
