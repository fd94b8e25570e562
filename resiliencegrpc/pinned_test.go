package resiliencegrpc_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A stream that the server ends OK without sending a message is committed
// (io.EOF is the end of a stream that worked): the caller gets no message
// and no error, the stream is not opened again, and the breaker counts one
// success, nothing out of band. As a half-open trial it closes the breaker.
func TestStreamEndsOKWithoutMessage(t *testing.T) {
	srv := &flaky{script: []step{{code: codes.Unavailable}}} // then OK, no message
	fk := clock.NewFake()
	b := breaker.New(breaker.WithThreshold(1), breaker.WithCooldown(time.Minute), breaker.WithClock(fk))
	c := streamClient(t, srv, resilience.Then(fast, breaker.Policy[any](b)), resiliencegrpc.WithBreaker(b))
	s, err := c.StreamingOutputCall(bounded(t), outputReq("m"))
	if err != nil {
		t.Fatalf("StreamingOutputCall: %v", err)
	}
	if _, err := s.Recv(); status.Code(err) != codes.Unavailable || b.State() != breaker.Open {
		t.Fatalf("first stream: Recv %v, breaker %v; want Unavailable, open", err, b.State())
	}

	fk.Advance(time.Minute) // the next stream is a half-open trial
	s, err = c.StreamingOutputCall(bounded(t), outputReq("m"))
	if err != nil {
		t.Fatalf("trial StreamingOutputCall: %v", err)
	}
	got, err := drain(s.Recv)
	if diff := cmp.Diff([]any{[]string(nil), nil, int64(2), breaker.Closed}, []any{got, err, srv.hits.Load(), b.State()}, cmpErrors); diff != "" {
		t.Errorf("messages, end, server hits, breaker state mismatch (-want +got):\n%s", diff)
	}

	s, err = c.StreamingOutputCall(bounded(t), outputReq("m"))
	if err != nil {
		t.Fatalf("StreamingOutputCall: %v", err)
	}
	got, err = drain(s.Recv)
	want := breaker.Counts{Calls: 1, Successes: 1, ConsecutiveSuccesses: 1}
	if diff := cmp.Diff([]any{[]string(nil), nil, int64(3), want}, []any{got, err, srv.hits.Load(), b.Counts()}, cmpErrors); diff != "" {
		t.Errorf("closed: messages, end, server hits, breaker counts mismatch (-want +got):\n%s", diff)
	}
}

// A failure status whose caller's context has ended by the time the
// policies return reaches the caller with the context's code (Canceled,
// DeadlineExceeded), not the server's: the caller gave up. The
// *StatusError is still there for errors.As.
func TestStatusErrorAfterCallerContextEnded(t *testing.T) {
	ended := func(code codes.Code) context.Context {
		if code == codes.DeadlineExceeded {
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			t.Cleanup(cancel)
			return ctx
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	for _, want := range []codes.Code{codes.Canceled, codes.DeadlineExceeded} {
		t.Run(want.String(), func(t *testing.T) {
			ctx := ended(want)
			// A layer that makes its attempt under a context of its own,
			// which the server fails with Unavailable, and returns the
			// failure to a caller whose context has ended.
			srv := &flaky{def: step{code: codes.Unavailable}}
			endsCaller := resilience.New("own-context", func(actx context.Context, next resilience.Next[any]) (any, error) {
				return next.Call(context.WithoutCancel(actx))
			})
			c := unaryClient(t, srv, endsCaller)
			_, err := c.UnaryCall(ctx, req("x"))
			var se *resiliencegrpc.StatusError
			inner := codes.OK
			if errors.As(err, &se) {
				inner = se.Status.Code()
			}
			if diff := cmp.Diff([]any{want, codes.Unavailable, int64(1)}, []any{status.Code(err), inner, srv.hits.Load()}); diff != "" {
				t.Errorf("the caller's code (%v), the StatusError's code, server hits mismatch (-want +got):\n%s", err, diff)
			}
		})
	}
}
