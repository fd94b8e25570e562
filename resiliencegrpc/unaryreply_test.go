package resiliencegrpc_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// The messages the attempts of a unary call decode into, seen by a fake
// invoker: attempts made one after the other (a retry's) decode into the
// caller's reply; attempts that run at once (a hedge's) into messages of
// their own, the winner's copied into the caller's reply.

// replies records the reply each attempt of a call was given.
type replies struct {
	mu  sync.Mutex
	got []any
}

func (r *replies) add(reply any) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, reply)
	return len(r.got)
}

func (r *replies) all() []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]any(nil), r.got...)
}

func TestUnaryRetryAttemptsDecodeIntoTheCallersReply(t *testing.T) {
	var rs replies
	invoker := func(_ context.Context, _ string, _, reply any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		if rs.add(reply) < 3 {
			return status.Error(codes.Unavailable, "down")
		}
		reply.(*testpb.SimpleResponse).Username = "third"
		return nil
	}
	p := retry.New[any](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0)))
	reply := new(testpb.SimpleResponse)
	if err := resiliencegrpc.UnaryClientInterceptor(p)(context.Background(), "/s/m", req("x"), reply, nil, invoker); err != nil {
		t.Fatalf("call: %v", err)
	}
	got := rs.all()
	if len(got) != 3 {
		t.Fatalf("%d attempts, want 3", len(got))
	}
	for i, r := range got {
		if r != any(reply) {
			t.Errorf("attempt %d decoded into a %T of its own, want the caller's reply (no attempt ran beside it)", i+1, r)
		}
	}
	if diff := cmp.Diff("third", reply.GetUsername()); diff != "" {
		t.Errorf("reply mismatch (-want +got):\n%s", diff)
	}
}

func TestUnaryHedgedAttemptsDecodeIntoMessagesOfTheirOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rs replies
		invoker := func(ctx context.Context, _ string, _, reply any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
			if rs.add(reply) == 1 {
				reply.(*testpb.SimpleResponse).Username = "first, cut short"
				<-ctx.Done() // the hedge cancels it once the second wins
				return status.FromContextError(ctx.Err()).Err()
			}
			reply.(*testpb.SimpleResponse).Hostname = "second"
			return nil
		}
		reply := &testpb.SimpleResponse{OauthScope: "stale"}
		if err := resiliencegrpc.UnaryClientInterceptor(hedge.New[any](time.Second))(context.Background(), "/s/m", req("x"), reply, nil, invoker); err != nil {
			t.Fatalf("call: %v", err)
		}
		got := rs.all()
		if len(got) != 2 {
			t.Fatalf("%d attempts, want 2", len(got))
		}
		if got[0] == got[1] {
			t.Errorf("the hedge's two attempts decoded into one message, want one each")
		}
		if want := (&testpb.SimpleResponse{Hostname: "second"}); !proto.Equal(want, reply) {
			t.Errorf("caller's reply %v, want the winner's alone: %v", reply, want)
		}
	})
}

// A message that is not a proto.Message (a codec of the caller's own) is
// made and copied as a Go value.
type plainReply struct{ Text string }

func TestUnaryHedgeOfAPlainMessage(t *testing.T) {
	// Not in a bubble: an attempt that panicked holding the call's lock
	// would leave the others blocked on it, which a bubble does not see
	// as blocked; the call is bounded instead.
	var rs replies
	invoker := func(ctx context.Context, _ string, _, reply any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		if rs.add(reply) == 1 {
			<-ctx.Done()
			return status.FromContextError(ctx.Err()).Err()
		}
		reply.(*plainReply).Text = "second"
		return nil
	}
	reply := &plainReply{Text: "stale"}
	_, err := within(t, "the hedged call", func() (struct{}, error) {
		return struct{}{}, resiliencegrpc.UnaryClientInterceptor(hedge.New[any](time.Millisecond))(context.Background(), "/s/m", "request", reply, nil, invoker)
	})
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	if got := rs.all(); len(got) != 2 || got[0] == got[1] {
		t.Errorf("attempts decoded into %v, want two messages", got)
	}
	if diff := cmp.Diff(plainReply{Text: "second"}, *reply); diff != "" {
		t.Errorf("reply mismatch (-want +got):\n%s", diff)
	}
}

// A Fallback's reply replaces the caller's reply whole: fields the caller's
// message held and the fallback's does not are cleared.
func TestUnaryFallbackReplyReplacesTheReply(t *testing.T) {
	fail := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		return status.Error(codes.Unavailable, "down")
	}
	t.Run("proto", func(t *testing.T) {
		cached := &testpb.SimpleResponse{Username: "cached"}
		p := resilience.Fallback(func(context.Context, error) (any, error) { return cached, nil })
		reply := &testpb.SimpleResponse{Hostname: "stale"}
		if err := resiliencegrpc.UnaryClientInterceptor(p)(context.Background(), "/s/m", req("x"), reply, nil, fail); err != nil {
			t.Fatalf("call: %v", err)
		}
		if !proto.Equal(cached, reply) {
			t.Errorf("reply %v, want the fallback's: %v", reply, cached)
		}
	})
	t.Run("plain", func(t *testing.T) {
		p := resilience.Fallback(func(context.Context, error) (any, error) { return &plainReply{Text: "cached"}, nil })
		reply := &plainReply{Text: "stale"}
		if err := resiliencegrpc.UnaryClientInterceptor(p)(context.Background(), "/s/m", "request", reply, nil, fail); err != nil {
			t.Fatalf("call: %v", err)
		}
		if diff := cmp.Diff(plainReply{Text: "cached"}, *reply); diff != "" {
			t.Errorf("reply mismatch (-want +got):\n%s", diff)
		}
	})
}
