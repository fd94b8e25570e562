package resiliencegrpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// streamClient serves srv and returns a client whose streams go through p
// with opts.
func streamClient(t *testing.T, srv testpb.TestServiceServer, p resilience.Policy[any], opts ...resiliencegrpc.Option) testpb.TestServiceClient {
	return serve(t, srv, nil, grpc.WithStreamInterceptor(resiliencegrpc.StreamClientInterceptor(p, opts...)))
}

func outputReq(body string) *testpb.StreamingOutputCallRequest {
	return &testpb.StreamingOutputCallRequest{Payload: &testpb.Payload{Body: []byte(body)}}
}

// maxMsgs bounds the messages a test receives from a stream: the tests'
// servers send a few, so a stream that goes on past it (one whose RecvMsg
// returns nil for ever, without a message) fails the test instead of
// spinning it.
const maxMsgs = 100

// drain receives from a stream until it ends, and returns the bodies and
// the error it ended with (nil for io.EOF); an error of its own if the
// stream has not ended after maxMsgs messages.
func drain[T interface{ GetPayload() *testpb.Payload }](recv func() (T, error)) ([]string, error) {
	var got []string
	for range maxMsgs {
		m, err := recv()
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, string(m.GetPayload().GetBody()))
	}
	return got, fmt.Errorf("test: the stream did not end after %d messages", maxMsgs)
}

var fast = retry.New[any](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0)))

// A stream that fails before the server answers is opened again, and its
// request replayed.
func TestStreamRetriedBeforeCommit(t *testing.T) {
	srv := &flaky{script: []step{{code: codes.Unavailable}, {code: codes.Internal}}, def: step{msgs: 3}}
	c := streamClient(t, srv, fast)
	s, err := c.StreamingOutputCall(bounded(t), outputReq("m"))
	if err != nil {
		t.Fatalf("StreamingOutputCall: %v", err)
	}
	got, err := drain(s.Recv)
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	if diff := cmp.Diff([]string{"m0", "m1", "m2"}, got); diff != "" {
		t.Errorf("messages mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(int64(3), srv.hits.Load()); diff != "" {
		t.Errorf("server hits mismatch (-want +got):\n%s", diff)
	}
}

// A stream that fails after its first message is committed: it is never
// replayed, the caller gets the failure, and the breaker records it.
func TestStreamCommittedIsNeverReplayed(t *testing.T) {
	for _, withBreaker := range []bool{true, false} {
		srv := &flaky{def: step{msgs: 2, code: codes.Unavailable}}
		b := breaker.New(breaker.WithThreshold(10))
		var opts []resiliencegrpc.Option
		if withBreaker {
			opts = append(opts, resiliencegrpc.WithBreaker(b))
		}
		c := streamClient(t, srv, resilience.Then(fast, breaker.Policy[any](b)), opts...)
		s, err := c.StreamingOutputCall(bounded(t), outputReq("m"))
		if err != nil {
			t.Fatalf("StreamingOutputCall: %v", err)
		}
		got, err := drain(s.Recv)
		if status.Code(err) != codes.Unavailable {
			t.Errorf("stream ended with %v, want Unavailable", err)
		}
		if _, again := s.Recv(); status.Code(again) != codes.Unavailable {
			t.Errorf("Recv after the failure: %v, want Unavailable again", again)
		}
		counts := b.Counts()
		wantFailures := uint64(0)
		if withBreaker {
			wantFailures = 1 // once, though Recv failed twice
		}
		if diff := cmp.Diff([]any{[]string{"m0", "m1"}, int64(1), uint64(1), wantFailures}, []any{got, srv.hits.Load(), counts.Successes, counts.Failures}); diff != "" {
			t.Errorf("WithBreaker %v: messages, server hits, breaker successes, failures mismatch (-want +got):\n%s", withBreaker, diff)
		}
	}
}

// A full-duplex stream: what the caller sent before the commit is sent
// again, in order, to the next attempt.
func TestStreamReplaysSentMessages(t *testing.T) {
	srv := &flaky{script: []step{{code: codes.Unavailable, recv: 2}}}
	c := streamClient(t, srv, fast)
	s, err := c.FullDuplexCall(bounded(t))
	if err != nil {
		t.Fatalf("FullDuplexCall: %v", err)
	}
	for _, body := range []string{"a", "b", "c"} {
		if err := s.Send(outputReq(body)); err != nil {
			t.Fatalf("Send(%q): %v", body, err)
		}
	}
	if err := s.CloseSend(); err != nil {
		t.Fatalf("CloseSend: %v", err)
	}
	got, err := drain(s.Recv)
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, got); diff != "" {
		t.Errorf("echoes mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"a", "b"}, {"a", "b", "c"}}, srv.streams()); diff != "" {
		t.Errorf("what each server stream read mismatch (-want +got):\n%s", diff)
	}
}

// A message that the caller changes after sending it is replayed as it
// was sent.
func TestStreamReplaysCopies(t *testing.T) {
	srv := &flaky{script: []step{{code: codes.Unavailable, recv: 1}}}
	c := streamClient(t, srv, fast)
	s, err := c.FullDuplexCall(bounded(t))
	if err != nil {
		t.Fatalf("FullDuplexCall: %v", err)
	}
	m := outputReq("before")
	if err := s.Send(m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	m.Payload.Body = []byte("after")
	if err := s.CloseSend(); err != nil {
		t.Fatalf("CloseSend: %v", err)
	}
	if _, err := drain(s.Recv); err != nil {
		t.Fatalf("Recv: %v", err)
	}
	if diff := cmp.Diff([][]string{{"before"}, {"before"}}, srv.streams()); diff != "" {
		t.Errorf("what each server stream read mismatch (-want +got):\n%s", diff)
	}
}

// A stream that sent more than ReplayLimit before the commit is not
// replayed: its failure is the caller's at once.
func TestStreamReplayLimit(t *testing.T) {
	srv := &flaky{def: step{code: codes.Unavailable, recv: 3}}
	c := streamClient(t, srv, fast)
	s, err := c.FullDuplexCall(bounded(t))
	if err != nil {
		t.Fatalf("FullDuplexCall: %v", err)
	}
	big := strings.Repeat("x", resiliencegrpc.ReplayLimit/2)
	for range 3 {
		if err := s.Send(outputReq(big)); err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	_, err = s.Recv()
	if status.Code(err) != codes.Unavailable || !resilience.IsPermanent(err) {
		t.Errorf("Recv: %v, want Unavailable marked permanent", err)
	}
	if errors.Is(err, resiliencegrpc.ErrNotReplayable) {
		t.Errorf("Recv: %v, want the retry stopped at the failure, without another attempt", err)
	}
	if diff := cmp.Diff(int64(1), srv.hits.Load()); diff != "" {
		t.Errorf("server hits mismatch (-want +got):\n%s", diff)
	}
}

// twice is a layer that calls its next a second time when the first call
// fails, whatever the error (as a hedge's extra attempt does), and returns
// the second call's result.
var twice = resilience.New("twice", func(ctx context.Context, next resilience.Next[any]) (any, error) {
	if v, err := next.Call(ctx); err == nil {
		return v, nil
	}
	return next.Call(ctx)
})

// An attempt after the first of a stream that sent more than ReplayLimit
// is not made: it fails with ErrNotReplayable, a permanent refusal, and
// the caller gets it.
func TestStreamNotReplayableAttempt(t *testing.T) {
	srv := &flaky{def: step{code: codes.Unavailable, recv: 3}}
	c := streamClient(t, srv, twice)
	s, err := c.FullDuplexCall(bounded(t))
	if err != nil {
		t.Fatalf("FullDuplexCall: %v", err)
	}
	big := strings.Repeat("x", resiliencegrpc.ReplayLimit/2)
	for range 3 {
		if err := s.Send(outputReq(big)); err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	_, err = s.Recv()
	got := []any{errors.Is(err, resiliencegrpc.ErrNotReplayable), errors.Is(err, resilience.ErrRefused), resilience.IsPermanent(err), status.Code(err), err.Error(), srv.hits.Load()}
	want := []any{true, true, true, codes.Unavailable, "resiliencegrpc: stream cannot be replayed (it sent too much, or a message that is not a proto.Message)", int64(1)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ErrNotReplayable, ErrRefused, permanent, code, message, server hits mismatch (-want +got):\n%s", diff)
	}
}

// An open breaker refuses the stream when it is opened, without calling
// the server.
func TestStreamRefusedByOpenBreaker(t *testing.T) {
	srv := &flaky{}
	b := breaker.New()
	b.ForceOpen()
	c := streamClient(t, srv, breaker.Policy[any](b))
	_, err := c.FullDuplexCall(bounded(t))
	if !errors.Is(err, breaker.ErrOpen) || status.Code(err) != codes.Unavailable {
		t.Errorf("FullDuplexCall: %v (code %v), want breaker.ErrOpen as Unavailable", err, status.Code(err))
	}
	if diff := cmp.Diff(int64(0), srv.hits.Load()); diff != "" {
		t.Errorf("server hits mismatch (-want +got):\n%s", diff)
	}
}

// The breaker opens on streams that fail before the commit, and closes
// again after a good trial.
func TestStreamBreakerOpensAndRecovers(t *testing.T) {
	srv := &flaky{script: []step{{code: codes.Unavailable}, {code: codes.Unavailable}}, def: step{msgs: 1}}
	fk := clock.NewFake()
	b := breaker.New(breaker.WithThreshold(2), breaker.WithCooldown(time.Minute), breaker.WithClock(fk))
	c := streamClient(t, srv, breaker.Policy[any](b))
	for i := range 2 {
		s, err := c.StreamingOutputCall(bounded(t), outputReq("m"))
		if err != nil {
			t.Fatalf("stream %d: %v", i+1, err)
		}
		if _, err := s.Recv(); status.Code(err) != codes.Unavailable {
			t.Fatalf("stream %d: Recv %v, want Unavailable", i+1, err)
		}
	}
	if _, err := c.StreamingOutputCall(bounded(t), outputReq("m")); !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("stream while open: %v, want breaker.ErrOpen", err)
	}
	fk.Advance(time.Minute)
	s, err := c.StreamingOutputCall(bounded(t), outputReq("m"))
	if err != nil {
		t.Fatalf("trial stream: %v", err)
	}
	got, err := drain(s.Recv)
	if err != nil {
		t.Fatalf("trial stream Recv: %v", err)
	}
	if diff := cmp.Diff([]any{[]string{"m0"}, breaker.Closed, int64(3)}, []any{got, b.State(), srv.hits.Load()}); diff != "" {
		t.Errorf("messages, breaker state, server hits mismatch (-want +got):\n%s", diff)
	}
}

// A stream that ends with an answer before any message is a success for
// the policies; the caller gets the answer.
func TestStreamAnswerBeforeCommit(t *testing.T) {
	srv := &flaky{def: step{code: codes.NotFound}}
	b := breaker.New(breaker.WithThreshold(1))
	c := streamClient(t, srv, resilience.Then(fast, breaker.Policy[any](b)))
	s, err := c.StreamingOutputCall(bounded(t), outputReq("m"))
	if err != nil {
		t.Fatalf("StreamingOutputCall: %v", err)
	}
	_, err = s.Recv()
	if diff := cmp.Diff([]any{codes.NotFound, int64(1), breaker.Closed, uint64(1)}, []any{status.Code(err), srv.hits.Load(), b.State(), b.Counts().Successes}); diff != "" {
		t.Errorf("code, server hits, breaker state, successes mismatch (-want +got):\n%s", diff)
	}
}

func TestStreamRetryHonoursPushback(t *testing.T) {
	srv := &flaky{script: []step{{code: codes.ResourceExhausted, pushback: "2500"}}, def: step{msgs: 1}}
	fk := clock.NewFake()
	var waits []time.Duration
	p := retry.New[any](retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(time.Millisecond)), retry.WithClock(fk),
		retry.WithOnRetry(func(_ int, _ error, d time.Duration) { waits = append(waits, d) }))
	c := streamClient(t, srv, p)
	var got []string
	err := advancing(t, fk, 1, 2500*time.Millisecond, func() error {
		s, err := c.StreamingOutputCall(bounded(t), outputReq("m"))
		if err != nil {
			return err
		}
		got, err = drain(s.Recv)
		return err
	})
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	if diff := cmp.Diff([]any{[]string{"m0"}, []time.Duration{2500 * time.Millisecond}}, []any{got, waits}); diff != "" {
		t.Errorf("messages, retry waits mismatch (-want +got):\n%s", diff)
	}
}

// The caller's cancellation of a stream that the server has not answered
// is neutral for the breaker; a timeout bounds the wait for the answer,
// and not the stream once it is committed.
func TestStreamCancelAndTimeout(t *testing.T) {
	srv := &flaky{script: []step{{hang: true}, {hang: true}}, def: step{msgs: 2}, arrived: make(chan struct{}, 4)}
	b := breaker.New(breaker.WithThreshold(1))
	c := streamClient(t, srv, resilience.Then(breaker.Policy[any](b), timeout.New[any](time.Hour)), resiliencegrpc.WithBreaker(b))
	ctx, cancel := context.WithCancel(bounded(t))
	s, err := c.StreamingOutputCall(ctx, outputReq("m"))
	if err != nil {
		t.Fatalf("StreamingOutputCall: %v", err)
	}
	await(t, srv.arrived, "the stream to reach the server")
	cancel()
	if _, err := s.Recv(); status.Code(err) != codes.Canceled {
		t.Errorf("Recv after cancel: %v, want Canceled", err)
	}
	if diff := cmp.Diff([]any{breaker.Closed, uint64(0)}, []any{b.State(), b.Counts().Failures}); diff != "" {
		t.Errorf("after the caller's cancel: breaker state, failures mismatch (-want +got):\n%s", diff)
	}

	// A 500ms timeout: the second stream's server hangs past it, the
	// third answers within it and outlives it.
	c = streamClient(t, srv, resilience.Then(fast, timeout.New[any](500*time.Millisecond)))
	s, err = c.StreamingOutputCall(bounded(t), outputReq("m"))
	if err != nil {
		t.Fatalf("StreamingOutputCall: %v", err)
	}
	got, err := drain(s.Recv)
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	if diff := cmp.Diff([]string{"m0", "m1"}, got); diff != "" {
		t.Errorf("messages mismatch (-want +got):\n%s", diff)
	}
}

// A hedged stream: the first to answer is committed, the other is
// cancelled.
func TestStreamHedged(t *testing.T) {
	fk := clock.NewFake()
	srv := &flaky{script: []step{{hang: true}}, def: step{msgs: 1}, arrived: make(chan struct{}, 2)}
	c := streamClient(t, srv, hedge.New[any](time.Second, hedge.WithClock(fk)))
	type result struct {
		got []string
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := c.StreamingOutputCall(bounded(t), outputReq("m"))
		if err != nil {
			done <- result{nil, err}
			return
		}
		got, err := drain(s.Recv)
		done <- result{got, err}
	}()
	await(t, srv.arrived, "the first stream to reach the server")
	if err := fk.BlockUntil(bounded(t), 1); err != nil {
		t.Fatalf("the hedge armed no timer within %v", liveBound)
	}
	fk.Advance(time.Second)
	r := await(t, done, "the hedged stream to end")
	if r.err != nil {
		t.Fatalf("stream: %v", r.err)
	}
	if diff := cmp.Diff([]any{[]string{"m0"}, int64(2)}, []any{r.got, srv.hits.Load()}); diff != "" {
		t.Errorf("messages, server hits mismatch (-want +got):\n%s", diff)
	}
}

// Header waits for the commit; Trailer gives the server's trailer; Context
// is the committed stream's.
func TestStreamHeaderTrailerContext(t *testing.T) {
	srv := &flaky{script: []step{{code: codes.Unavailable}}, def: step{msgs: 1, pushback: "7"}}
	c := streamClient(t, srv, fast)
	s, err := c.StreamingOutputCall(bounded(t), outputReq("m"))
	if err != nil {
		t.Fatalf("StreamingOutputCall: %v", err)
	}
	md, err := s.Header()
	if err != nil || md == nil {
		t.Fatalf("Header: %v, %v; want headers", md, err)
	}
	if s.Context() == nil || s.Context().Err() != nil {
		t.Errorf("Context of a live stream: %v", s.Context())
	}
	if _, err := drain(s.Recv); err != nil {
		t.Fatalf("Recv: %v", err)
	}
	if diff := cmp.Diff([]string{"7"}, s.Trailer().Get(resiliencegrpc.PushbackKey)); diff != "" {
		t.Errorf("trailer mismatch (-want +got):\n%s", diff)
	}
}

// A stream carries the caller's deadline to the server.
func TestStreamCallerDeadlinePropagates(t *testing.T) {
	srv := &flaky{def: step{msgs: 1}}
	c := streamClient(t, srv, fast)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := c.StreamingOutputCall(ctx, outputReq("m"))
	if err != nil {
		t.Fatalf("StreamingOutputCall: %v", err)
	}
	if _, err := drain(s.Recv); err != nil {
		t.Fatalf("Recv: %v", err)
	}
	if d := srv.callDeadlines(); len(d) != 1 || d[0] <= 0 || d[0] > 5*time.Second {
		t.Errorf("the server's deadlines %v, want one in (0, 5s]", d)
	}
}
