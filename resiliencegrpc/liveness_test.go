package resiliencegrpc_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The tests' clients bound every call they make, and every use of a
// stream, so that an interceptor that never returns (one that waits for an
// attempt nobody ends, a stream never established) fails the test instead
// of hanging it: each must return within liveBound. It is a bound for
// failure only, not a measure of speed: a call of these tests returns in
// milliseconds, or waits on a fake clock that the test advances at once.

// liveBound is how long a call of a test may take to return.
const liveBound = 2 * time.Second

// within runs f on a goroutine of its own and returns its results, or
// reports a test error and returns an error of its own if f has not
// returned after liveBound. It may be called from any goroutine; t is nil
// in an example.
func within[T any](t testing.TB, what string, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(liveBound):
		if t != nil { // nil in an example, which fails on the error's output
			t.Errorf("%s did not return after %v", what, liveBound)
		}
		var zero T
		return zero, status.Errorf(codes.DeadlineExceeded, "test: %s did not return after %v", what, liveBound)
	}
}

// liveClient is a TestServiceClient whose calls and streams are bounded
// by within.
type liveClient struct {
	testpb.TestServiceClient
	t testing.TB
}

func (c liveClient) EmptyCall(ctx context.Context, in *testpb.Empty, opts ...grpc.CallOption) (*testpb.Empty, error) {
	return within(c.t, "EmptyCall", func() (*testpb.Empty, error) { return c.TestServiceClient.EmptyCall(ctx, in, opts...) })
}

func (c liveClient) UnaryCall(ctx context.Context, in *testpb.SimpleRequest, opts ...grpc.CallOption) (*testpb.SimpleResponse, error) {
	return within(c.t, "UnaryCall", func() (*testpb.SimpleResponse, error) { return c.TestServiceClient.UnaryCall(ctx, in, opts...) })
}

func (c liveClient) StreamingOutputCall(ctx context.Context, in *testpb.StreamingOutputCallRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[testpb.StreamingOutputCallResponse], error) {
	s, err := within(c.t, "StreamingOutputCall", func() (grpc.ServerStreamingClient[testpb.StreamingOutputCallResponse], error) {
		return c.TestServiceClient.StreamingOutputCall(ctx, in, opts...)
	})
	if err != nil {
		return nil, err
	}
	return &liveStream[testpb.StreamingOutputCallRequest, testpb.StreamingOutputCallResponse]{ClientStream: s, t: c.t}, nil
}

func (c liveClient) FullDuplexCall(ctx context.Context, opts ...grpc.CallOption) (grpc.BidiStreamingClient[testpb.StreamingOutputCallRequest, testpb.StreamingOutputCallResponse], error) {
	s, err := within(c.t, "FullDuplexCall", func() (grpc.BidiStreamingClient[testpb.StreamingOutputCallRequest, testpb.StreamingOutputCallResponse], error) {
		return c.TestServiceClient.FullDuplexCall(ctx, opts...)
	})
	if err != nil {
		return nil, err
	}
	return &liveStream[testpb.StreamingOutputCallRequest, testpb.StreamingOutputCallResponse]{ClientStream: s, t: c.t}, nil
}

// liveStream is a client stream whose methods are bounded by within.
type liveStream[Req, Resp any] struct {
	grpc.ClientStream
	t testing.TB
}

func (s *liveStream[Req, Resp]) Send(m *Req) error { return s.SendMsg(m) }

func (s *liveStream[Req, Resp]) Recv() (*Resp, error) {
	m := new(Resp)
	if err := s.RecvMsg(m); err != nil {
		return nil, err
	}
	return m, nil
}

func (s *liveStream[Req, Resp]) SendMsg(m any) error {
	_, err := within(s.t, "SendMsg", func() (struct{}, error) { return struct{}{}, s.ClientStream.SendMsg(m) })
	return err
}

func (s *liveStream[Req, Resp]) RecvMsg(m any) error {
	_, err := within(s.t, "RecvMsg", func() (struct{}, error) { return struct{}{}, s.ClientStream.RecvMsg(m) })
	return err
}

func (s *liveStream[Req, Resp]) CloseSend() error {
	_, err := within(s.t, "CloseSend", func() (struct{}, error) { return struct{}{}, s.ClientStream.CloseSend() })
	return err
}

func (s *liveStream[Req, Resp]) Header() (metadata.MD, error) {
	return within(s.t, "Header", s.ClientStream.Header)
}
