package resiliencegrpc_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The stream client interceptor releases (cancels the context of) every
// stream it opened that the caller does not get, seen through a fake
// streamer that keeps the contexts it was given.

// streams is a fake streamer's record of the contexts of the streams it
// opened or tried to open.
type streams struct {
	mu   sync.Mutex
	ctxs []context.Context
}

func (s *streams) add(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctxs = append(s.ctxs, ctx)
}

func (s *streams) all() []context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]context.Context(nil), s.ctxs...)
}

// An attempt whose stream could not be opened releases its context.
func TestStreamFailedOpenIsReleased(t *testing.T) {
	var ss streams
	streamer := func(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
		ss.add(ctx)
		return nil, status.Error(codes.Unavailable, "down")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := resiliencegrpc.StreamClientInterceptor(resilience.Policy[any]{})(ctx, &grpc.StreamDesc{ServerStreams: true}, nil, "/s/m", streamer)
	if status.Code(err) != codes.Unavailable {
		t.Errorf("interceptor error %v, want Unavailable", err)
	}
	for i, c := range ss.all() {
		if c.Err() == nil {
			t.Errorf("attempt %d: the context of a stream that failed to open was not released", i+1)
		}
	}
}

// A stream that a layer turned down after it was committed (here a hedge
// that accepts only the second result) is released, its context
// cancelled, once the policies have chosen another.
func TestStreamTurnedDownIsReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var ctxs []context.Context
		streamer := func(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
			mu.Lock()
			defer mu.Unlock()
			ctxs = append(ctxs, ctx)
			return &openStream{ctx: ctx}, nil
		}
		var seen atomic.Int32
		accept := func(_ any, err error) bool { return err == nil && seen.Add(1) > 1 }
		p := hedge.New[any](time.Second, hedge.WithAccept(accept))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s, err := resiliencegrpc.StreamClientInterceptor(p)(ctx, &grpc.StreamDesc{ServerStreams: true}, nil, "/s/m", streamer)
		if err != nil {
			t.Fatalf("interceptor: %v", err)
		}
		if _, err := s.Header(); err != nil { // waits for the policies
			t.Fatalf("Header: %v", err)
		}
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(ctxs) != 2 {
			t.Fatalf("%d streams opened, want 2", len(ctxs))
		}
		won := s.Context()
		var released, kept int
		for _, c := range ctxs {
			switch {
			case c == won && c.Err() == nil:
				kept++
			case c != won && errors.Is(c.Err(), context.Canceled):
				released++
			}
		}
		if released != 1 || kept != 1 {
			t.Errorf("of the two streams, %d released and %d kept as the caller's; want 1 and 1", released, kept)
		}
	})
}

// A stream opened after the policies returned (by an op that a layer left
// running) is not used: the attempt is refused and the stream released.
func TestStreamOpenedAfterThePoliciesReturnedIsReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ss streams
		entered, gate := make(chan struct{}), make(chan struct{})
		streamer := func(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
			close(entered)
			<-gate
			ss.add(ctx)
			return &openStream{ctx: ctx}, nil
		}
		errGaveUp := errors.New("gave up")
		late := make(chan error, 1)
		leave := resilience.New("leave", func(ctx context.Context, next resilience.Next[any]) (any, error) {
			go func() {
				_, err := next.Call(ctx)
				late <- err
			}()
			<-entered // the op is opening its stream
			return nil, errGaveUp
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, err := resiliencegrpc.StreamClientInterceptor(leave)(ctx, &grpc.StreamDesc{ServerStreams: true}, nil, "/s/m", streamer)
		if !errors.Is(err, errGaveUp) {
			t.Fatalf("interceptor error %v, want the layer's", err)
		}
		close(gate)
		if err := <-late; !errors.Is(err, resilience.ErrRefused) {
			t.Errorf("late attempt's error %v, want one matching resilience.ErrRefused", err)
		}
		got := ss.all()
		if len(got) != 1 || got[0].Err() == nil {
			t.Errorf("the stream opened after the policies returned was not released")
		}
	})
}

// A committed stream read to its end is released.
func TestStreamReadToItsEndIsReleased(t *testing.T) {
	var ss streams
	streamer := func(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
		ss.add(ctx)
		return &endedStream{openStream{ctx: ctx}}, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs, err := resiliencegrpc.StreamClientInterceptor(resilience.Policy[any]{})(ctx, &grpc.StreamDesc{ServerStreams: true}, nil, "/s/m", streamer)
	if err != nil {
		t.Fatalf("interceptor: %v", err)
	}
	if err := cs.RecvMsg(nil); err != io.EOF {
		t.Fatalf("RecvMsg: %v, want io.EOF", err)
	}
	if got := ss.all(); len(got) != 1 || got[0].Err() == nil {
		t.Errorf("the stream read to its end was not released")
	}
}

// endedStream is a committed stream that has no more messages.
type endedStream struct{ openStream }

func (*endedStream) RecvMsg(any) error { return io.EOF }
