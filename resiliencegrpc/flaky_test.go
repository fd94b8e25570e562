package resiliencegrpc_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
)

// step is what the flaky server does for one call.
type step struct {
	code     codes.Code    // the status it ends with; OK for success
	pushback string        // a grpc-retry-pushback-ms trailer, if not ""
	hang     bool          // wait for the call's context to end first
	msgs     int           // streams: response messages sent before ending
	recv     int           // full duplex: requests read before ending (failing steps)
	gate     chan struct{} // if not nil, wait for it to close first
	body     string        // unary: the reply's body, if not the request's
}

// flaky is a test service that follows a script: the i-th call of any
// method does script[i], and calls past the script do def.
type flaky struct {
	testpb.UnimplementedTestServiceServer

	mu        sync.Mutex
	script    []step
	def       step
	calls     int
	deadlines []time.Duration // time left on each call's deadline; -1 if none
	received  [][]string      // full duplex: the bodies each stream read
	arrived   chan struct{}   // if not nil, gets a value as each call arrives

	hits atomic.Int64
}

func (f *flaky) next(ctx context.Context) step {
	f.hits.Add(1)
	f.mu.Lock()
	left := time.Duration(-1)
	if d, ok := ctx.Deadline(); ok {
		left = time.Until(d)
	}
	f.deadlines = append(f.deadlines, left)
	s := f.def
	if f.calls < len(f.script) {
		s = f.script[f.calls]
	}
	f.calls++
	f.mu.Unlock()
	if f.arrived != nil {
		f.arrived <- struct{}{}
	}
	return s
}

// end finishes a call as s says, once its messages are sent.
func (s step) end(ctx context.Context, setTrailer func(metadata.MD)) error {
	if s.gate != nil {
		select {
		case <-s.gate:
		case <-ctx.Done():
		}
	}
	if s.pushback != "" {
		setTrailer(metadata.Pairs("grpc-retry-pushback-ms", s.pushback))
	}
	if s.hang {
		<-ctx.Done()
		return status.FromContextError(ctx.Err()).Err()
	}
	if s.code != codes.OK {
		return status.Error(s.code, "flaky: "+s.code.String())
	}
	return nil
}

func (f *flaky) EmptyCall(ctx context.Context, _ *testpb.Empty) (*testpb.Empty, error) {
	s := f.next(ctx)
	if err := s.end(ctx, func(md metadata.MD) { _ = grpc.SetTrailer(ctx, md) }); err != nil {
		return nil, err
	}
	return &testpb.Empty{}, nil
}

func (f *flaky) UnaryCall(ctx context.Context, req *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	s := f.next(ctx)
	if err := s.end(ctx, func(md metadata.MD) { _ = grpc.SetTrailer(ctx, md) }); err != nil {
		return nil, err
	}
	if s.body != "" {
		return &testpb.SimpleResponse{Payload: &testpb.Payload{Body: []byte(s.body)}}, nil
	}
	return &testpb.SimpleResponse{Payload: req.GetPayload()}, nil
}

func (f *flaky) StreamingOutputCall(req *testpb.StreamingOutputCallRequest, stream grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
	s := f.next(stream.Context())
	for i := range s.msgs {
		body := append([]byte(nil), req.GetPayload().GetBody()...)
		body = append(body, byte('0'+i))
		if err := stream.Send(&testpb.StreamingOutputCallResponse{Payload: &testpb.Payload{Body: body}}); err != nil {
			return err
		}
	}
	return s.end(stream.Context(), stream.SetTrailer)
}

// FullDuplexCall echoes each request. A failing step reads s.recv requests
// and sends s.msgs echoes first.
func (f *flaky) FullDuplexCall(stream grpc.BidiStreamingServer[testpb.StreamingOutputCallRequest, testpb.StreamingOutputCallResponse]) error {
	s := f.next(stream.Context())
	f.mu.Lock()
	idx := len(f.received)
	f.received = append(f.received, nil)
	f.mu.Unlock()
	failing := s.code != codes.OK || s.hang
	for n := 0; !failing || n < s.recv; n++ {
		req, err := stream.Recv()
		if err != nil {
			break // io.EOF: the client is done sending
		}
		f.mu.Lock()
		f.received[idx] = append(f.received[idx], string(req.GetPayload().GetBody()))
		f.mu.Unlock()
		if failing && n >= s.msgs {
			continue
		}
		if err := stream.Send(&testpb.StreamingOutputCallResponse{Payload: req.GetPayload()}); err != nil {
			return err
		}
	}
	return s.end(stream.Context(), stream.SetTrailer)
}

func (f *flaky) streams() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.received...)
}

func (f *flaky) callDeadlines() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.deadlines...)
}

// serve starts srv on an in-process bufconn listener with the server
// options given, and returns a client of it dialled with the dial options
// given (gRPC's own retries off). Both stop when the test ends.
func serve(t testing.TB, srv testpb.TestServiceServer, sopts []grpc.ServerOption, dopts ...grpc.DialOption) testpb.TestServiceClient {
	t.Helper()
	c, stop, err := start(srv, sopts, dopts...)
	if err != nil {
		t.Fatalf("grpc.NewClient: %v", err)
	}
	t.Cleanup(stop)
	return liveClient{TestServiceClient: c.(liveClient).TestServiceClient, t: t}
}

// start is serve for examples: it returns the client, whose calls fail
// with an error of their own if they do not return after liveBound, and a
// function that stops the client and the server.
func start(srv testpb.TestServiceServer, sopts []grpc.ServerOption, dopts ...grpc.DialOption) (testpb.TestServiceClient, func(), error) {
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer(sopts...)
	testpb.RegisterTestServiceServer(s, srv)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(lis)
	}()
	dopts = append([]grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDisableRetry(),
	}, dopts...)
	cc, err := grpc.NewClient("passthrough:///bufnet", dopts...)
	stop := func() {
		if cc != nil {
			cc.Close()
		}
		s.Stop()
		<-done
	}
	if err != nil {
		stop()
		return nil, nil, err
	}
	return liveClient{TestServiceClient: testpb.NewTestServiceClient(cc)}, stop, nil
}

// bounded returns a context that ends after liveBound, the bound of every
// wait in a test: a call that hangs fails the test instead of the run.
func bounded(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), liveBound)
	t.Cleanup(cancel)
	return ctx
}

// await waits for a value on ch, failing the test after liveBound with
// what.
func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(liveBound):
		t.Fatalf("timed out after %v waiting for %s", liveBound, what)
		panic("unreachable")
	}
}

func req(body string) *testpb.SimpleRequest {
	return &testpb.SimpleRequest{Payload: &testpb.Payload{Body: []byte(body)}}
}
