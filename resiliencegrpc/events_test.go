package resiliencegrpc_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"github.com/f0b5b96b/resilience/telemetry"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// recorder keeps the events it observes, from any goroutine.
type recorder struct {
	mu  sync.Mutex
	got []telemetry.Event
}

func (r *recorder) Observe(e telemetry.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, e)
}

func (r *recorder) events() []telemetry.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]telemetry.Event(nil), r.got...)
}

// sameErr compares events' errors: a status error by its code, a
// refusal by the sentinel it matches, others with errors.Is.
var sameErr = cmp.Comparer(func(a, b error) bool {
	if sa, ok := status.FromError(a); ok && a != nil {
		sb, ok := status.FromError(b)
		return ok && b != nil && sa.Code() == sb.Code()
	}
	return errors.Is(a, b) || errors.Is(b, a)
})

// The unary interceptor reports its decision on each call: an answer (OK
// or a status that is not a failure), a failure, a refusal; named after
// its policy and keyed by the method.
func TestServerEventsUnary(t *testing.T) {
	lim := ratelimit.New(resilience.Off, 3, ratelimit.WithName("api")) // three calls, then refusals
	p := ratelimit.Policy[struct{}](lim)
	var obs recorder
	srv := &flaky{script: []step{{}, {code: codes.Unavailable}, {code: codes.NotFound}}}
	c := serve(t, srv, []grpc.ServerOption{grpc.UnaryInterceptor(resiliencegrpc.UnaryServerInterceptor(p, resiliencegrpc.WithObserver(&obs)))})
	for range 4 {
		_, _ = c.UnaryCall(bounded(t), req("x"))
	}
	name, method := p.String(), testpb.TestService_UnaryCall_FullMethodName
	want := []telemetry.Event{
		{Type: resiliencegrpc.EventAnswered, Name: name, Key: method},
		{Type: resiliencegrpc.EventFailure, Name: name, Key: method, Err: status.Error(codes.Unavailable, "")},
		{Type: resiliencegrpc.EventAnswered, Name: name, Key: method, Err: status.Error(codes.NotFound, "")},
		{Type: resiliencegrpc.EventRefused, Name: name, Key: method, Err: ratelimit.ErrLimited},
	}
	if diff := cmp.Diff(want, obs.events(), sameErr); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	for _, e := range obs.events() {
		if e.Kind() != resiliencegrpc.Kind {
			t.Errorf("event %s of kind %q, want %q", e.Type, e.Kind(), resiliencegrpc.Kind)
		}
	}
}

// WithClassify decides which statuses are failures in the events too.
func TestServerEventsClassify(t *testing.T) {
	var obs recorder
	srv := &flaky{script: []step{{code: codes.NotFound}}}
	notFoundFails := func(s *status.Status) bool { return s.Code() == codes.NotFound }
	c := serve(t, srv, []grpc.ServerOption{grpc.UnaryInterceptor(resiliencegrpc.UnaryServerInterceptor(resilience.Policy[struct{}]{},
		resiliencegrpc.WithObserver(&obs), resiliencegrpc.WithClassify(notFoundFails)))})
	_, _ = c.UnaryCall(bounded(t), req("x"))
	want := []telemetry.Event{{Type: resiliencegrpc.EventFailure, Name: "identity", Key: testpb.TestService_UnaryCall_FullMethodName, Err: status.Error(codes.NotFound, "")}}
	if diff := cmp.Diff(want, obs.events(), sameErr); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

// A policy that returns without calling the handler is a failure,
// ErrNotServed, on both interceptors.
func TestServerEventsNotServed(t *testing.T) {
	skip := resilience.New("skip", func(context.Context, resilience.Next[struct{}]) (struct{}, error) { return struct{}{}, nil })
	var obs recorder
	c := serve(t, &flaky{}, []grpc.ServerOption{
		grpc.UnaryInterceptor(resiliencegrpc.UnaryServerInterceptor(skip, resiliencegrpc.WithObserver(&obs))),
		grpc.StreamInterceptor(resiliencegrpc.StreamServerInterceptor(skip, resiliencegrpc.WithObserver(&obs))),
	})
	if _, err := c.UnaryCall(bounded(t), req("x")); status.Code(err) != codes.Internal {
		t.Fatalf("unary call: %v, want Internal", err)
	}
	s, err := c.StreamingOutputCall(bounded(t), outputReq("s"))
	if err != nil {
		t.Fatalf("StreamingOutputCall: %v", err)
	}
	if _, err := s.Recv(); status.Code(err) != codes.Internal {
		t.Fatalf("stream: %v, want Internal", err)
	}
	want := []telemetry.Event{
		{Type: resiliencegrpc.EventFailure, Name: "skip", Key: testpb.TestService_UnaryCall_FullMethodName, Err: resiliencegrpc.ErrNotServed},
		{Type: resiliencegrpc.EventFailure, Name: "skip", Key: testpb.TestService_StreamingOutputCall_FullMethodName, Err: resiliencegrpc.ErrNotServed},
	}
	if diff := cmp.Diff(want, obs.events(), sameErr); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

// The stream interceptor reports each stream's decision; InHandle reports
// the calls it refuses, and only those.
func TestServerEventsStreamAndTap(t *testing.T) {
	streams := ratelimit.New(resilience.Off, 2, ratelimit.WithName("streams"))
	tap := ratelimit.New(resilience.Off, 4, ratelimit.WithName("tap"))
	var inter, tapped recorder
	srv := &flaky{script: []step{{msgs: 1}, {code: codes.Internal}}}
	c := serve(t, srv, []grpc.ServerOption{
		grpc.InTapHandle(resiliencegrpc.InHandle(ratelimit.Policy[struct{}](tap), resiliencegrpc.WithObserver(&tapped))),
		grpc.StreamInterceptor(resiliencegrpc.StreamServerInterceptor(ratelimit.Policy[struct{}](streams), resiliencegrpc.WithObserver(&inter))),
	})
	codesGot := []codes.Code{}
	for range 5 {
		s, err := c.StreamingOutputCall(bounded(t), outputReq("s"))
		if err == nil {
			for err == nil {
				_, err = s.Recv()
			}
		}
		if err == io.EOF {
			err = nil
		}
		codesGot = append(codesGot, status.Code(err))
	}
	if diff := cmp.Diff([]codes.Code{codes.OK, codes.Internal, codes.ResourceExhausted, codes.ResourceExhausted, codes.ResourceExhausted}, codesGot); diff != "" {
		t.Fatalf("streams' codes mismatch (-want +got):\n%s", diff)
	}
	method := testpb.TestService_StreamingOutputCall_FullMethodName
	wantInter := []telemetry.Event{
		{Type: resiliencegrpc.EventAnswered, Name: "ratelimit(streams)", Key: method},
		{Type: resiliencegrpc.EventFailure, Name: "ratelimit(streams)", Key: method, Err: status.Error(codes.Internal, "")},
		{Type: resiliencegrpc.EventRefused, Name: "ratelimit(streams)", Key: method, Err: ratelimit.ErrLimited},
		{Type: resiliencegrpc.EventRefused, Name: "ratelimit(streams)", Key: method, Err: ratelimit.ErrLimited},
	}
	if diff := cmp.Diff(wantInter, inter.events(), sameErr); diff != "" {
		t.Errorf("interceptor's events mismatch (-want +got):\n%s", diff)
	}
	wantTap := []telemetry.Event{{Type: resiliencegrpc.EventRefused, Name: "ratelimit(tap)", Key: method, Err: ratelimit.ErrLimited}}
	if diff := cmp.Diff(wantTap, tapped.events(), sameErr); diff != "" {
		t.Errorf("InHandle's events mismatch (-want +got):\n%s", diff)
	}
}
