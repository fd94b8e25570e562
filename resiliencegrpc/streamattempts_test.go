package resiliencegrpc_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The attempts to establish a stream, seen through a fake streamer: an
// attempt that failed gets none of what the caller sends afterwards, and
// its stream is released; the caller's Trailer before a commit is the last
// failed attempt's.

// fakeStream is a stream whose server answers with its headers when
// headers is closed, or ends without them with end (when end is not nil,
// after headers... is never closed); with neither, it ends when its
// context does.
type fakeStream struct {
	grpc.ClientStream // nil: the methods below are the ones the interceptor uses
	ctx               context.Context
	headers           chan struct{} // closed when the server answers; nil: never
	gate              chan struct{} // end comes once it is closed; nil: at once
	end               error         // the status it ends with without headers; nil: its context's
	trailer           metadata.MD

	mu   sync.Mutex
	sent int
}

func (s *fakeStream) ended() error {
	if s.end == nil {
		<-s.ctx.Done()
		return status.FromContextError(s.ctx.Err()).Err()
	}
	if s.gate != nil {
		select {
		case <-s.gate:
		case <-s.ctx.Done():
			return status.FromContextError(s.ctx.Err()).Err()
		}
	}
	return s.end
}

func (s *fakeStream) Header() (metadata.MD, error) {
	if s.headers != nil {
		select {
		case <-s.headers:
			return metadata.MD{}, nil
		case <-s.ctx.Done():
		}
	}
	return nil, s.ended()
}

func (s *fakeStream) RecvMsg(any) error { return s.ended() }

func (s *fakeStream) SendMsg(any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent++
	return nil
}

func (s *fakeStream) sends() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}

func (s *fakeStream) CloseSend() error         { return nil }
func (s *fakeStream) Trailer() metadata.MD     { return s.trailer }
func (s *fakeStream) Context() context.Context { return s.ctx }

// fakeStreamer opens the streams make returns, one per attempt, and keeps
// them.
type fakeStreamer struct {
	mu      sync.Mutex
	make    func(n int, ctx context.Context) *fakeStream
	streams []*fakeStream
}

func (f *fakeStreamer) open(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.make(len(f.streams), ctx)
	f.streams = append(f.streams, s)
	return s, nil
}

func (f *fakeStreamer) all() []*fakeStream {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*fakeStream(nil), f.streams...)
}

func TestStreamFailedAttemptGetsNothingMore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate2, headers3 := make(chan struct{}), make(chan struct{})
		f := &fakeStreamer{make: func(n int, ctx context.Context) *fakeStream {
			switch n {
			case 0: // no answer: the timeout ends it
				return &fakeStream{ctx: ctx}
			case 1: // fails without headers once gate2 is closed
				return &fakeStream{ctx: ctx, gate: gate2, end: status.Error(codes.Unavailable, "down")}
			}
			return &fakeStream{ctx: ctx, headers: headers3}
		}}
		p := resilience.Then(retry.New[any](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0))), timeout.New[any](time.Second))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cs, err := resiliencegrpc.StreamClientInterceptor(p)(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, nil, "/s/m", f.open)
		if err != nil {
			t.Fatalf("interceptor: %v", err)
		}
		time.Sleep(1500 * time.Millisecond) // the first attempt times out, the second waits
		synctest.Wait()
		if err := cs.SendMsg(req("m1")); err != nil { // to the second attempt
			t.Fatalf("SendMsg: %v", err)
		}
		close(gate2) // the second attempt fails
		synctest.Wait()
		if err := cs.SendMsg(req("m2")); err != nil { // to the third attempt, after m1 replayed
			t.Fatalf("SendMsg: %v", err)
		}
		close(headers3)
		if _, err := cs.Header(); err != nil {
			t.Fatalf("Header: %v", err)
		}
		streams := f.all()
		if len(streams) != 3 {
			t.Fatalf("%d streams opened, want 3", len(streams))
		}
		if diff := cmp.Diff([]int{0, 1, 2}, []int{streams[0].sends(), streams[1].sends(), streams[2].sends()}); diff != "" {
			t.Errorf("messages each stream got mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]bool{true, true, false}, []bool{streams[0].ctx.Err() != nil, streams[1].ctx.Err() != nil, streams[2].ctx.Err() != nil}); diff != "" {
			t.Errorf("streams released mismatch (-want +got):\n%s", diff)
		}
	})
}

// Before a commit, the caller's Trailer is the last failed attempt's.
func TestStreamTrailerOfTheFailedAttempt(t *testing.T) {
	f := &fakeStreamer{make: func(_ int, ctx context.Context) *fakeStream {
		return &fakeStream{ctx: ctx, end: status.Error(codes.Unavailable, "down"), trailer: metadata.Pairs("why", "down")}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs, err := resiliencegrpc.StreamClientInterceptor(resilience.Policy[any]{})(ctx, &grpc.StreamDesc{ServerStreams: true}, nil, "/s/m", f.open)
	if err != nil {
		t.Fatalf("interceptor: %v", err)
	}
	if err := cs.RecvMsg(new(testpb.StreamingOutputCallResponse)); status.Code(err) != codes.Unavailable {
		t.Fatalf("RecvMsg: %v, want Unavailable", err)
	}
	if diff := cmp.Diff(metadata.Pairs("why", "down"), cs.Trailer()); diff != "" {
		t.Errorf("trailer mismatch (-want +got):\n%s", diff)
	}
}
