package resiliencegrpc_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
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

// unaryClient serves srv and returns a client whose unary calls go through
// p with opts.
func unaryClient(t *testing.T, srv testpb.TestServiceServer, p resilience.Policy[any], opts ...resiliencegrpc.Option) testpb.TestServiceClient {
	return serve(t, srv, nil, grpc.WithUnaryInterceptor(resiliencegrpc.UnaryClientInterceptor(p, opts...)))
}

// advancing runs call in a goroutine and, each of n times, waits for a
// timer on fk (a retry's wait, say) and advances fk by d; then it returns
// call's error.
func advancing(t *testing.T, fk *clock.Fake, n int, d time.Duration, call func() error) error {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- call() }()
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), liveBound)
		err := fk.BlockUntil(ctx, 1)
		cancel()
		if err != nil {
			t.Fatalf("wait %d of %d: no timer armed on the fake clock within %v", i+1, n, liveBound)
		}
		fk.Advance(d)
	}
	return await(t, errc, "the call to return")
}

func TestUnaryRetriesFailuresUntilSuccess(t *testing.T) {
	srv := &flaky{script: []step{{code: codes.Unavailable}, {code: codes.Internal}}}
	p := retry.New[any](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0)))
	c := unaryClient(t, srv, p)
	resp, err := c.UnaryCall(bounded(t), req("hello"))
	if err != nil {
		t.Fatalf("UnaryCall: %v", err)
	}
	if diff := cmp.Diff("hello", string(resp.GetPayload().GetBody())); diff != "" {
		t.Errorf("reply mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(int64(3), srv.hits.Load()); diff != "" {
		t.Errorf("server hits mismatch (-want +got):\n%s", diff)
	}
}

// An answer (NotFound) is a success for the breaker and stops the retry;
// the caller gets it as the server sent it.
func TestUnaryAnswerIsSuccessAndNotRetried(t *testing.T) {
	srv := &flaky{def: step{code: codes.NotFound}}
	b := breaker.New(breaker.WithThreshold(1))
	p := resilience.Then(retry.New[any](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0))), breaker.Policy[any](b))
	c := unaryClient(t, srv, p)
	for range 3 {
		_, err := c.UnaryCall(bounded(t), req("x"))
		s := status.Convert(err)
		if diff := cmp.Diff([]string{"NotFound", "flaky: NotFound"}, []string{s.Code().String(), s.Message()}); diff != "" {
			t.Errorf("status mismatch (-want +got):\n%s", diff)
		}
		var se *resiliencegrpc.StatusError
		if errors.As(err, &se) {
			t.Errorf("an answer reached the caller as a *StatusError: %v", err)
		}
	}
	if diff := cmp.Diff(int64(3), srv.hits.Load()); diff != "" {
		t.Errorf("server hits mismatch (-want +got):\n%s", diff)
	}
	got := b.Counts()
	if diff := cmp.Diff([]any{breaker.Closed, uint64(3), uint64(0)}, []any{b.State(), got.Successes, got.Failures}); diff != "" {
		t.Errorf("breaker state, successes, failures mismatch (-want +got):\n%s", diff)
	}
}

func TestUnaryClassifyOption(t *testing.T) {
	srv := &flaky{script: []step{{code: codes.NotFound}}}
	p := retry.New[any](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0)))
	notFoundFails := func(s *status.Status) bool { return s.Code() == codes.NotFound || resiliencegrpc.IsFailure(s) }
	c := unaryClient(t, srv, p, resiliencegrpc.WithClassify(notFoundFails))
	if _, err := c.UnaryCall(bounded(t), req("x")); err != nil {
		t.Fatalf("UnaryCall: %v", err)
	}
	if diff := cmp.Diff(int64(2), srv.hits.Load()); diff != "" {
		t.Errorf("server hits mismatch (-want +got):\n%s", diff)
	}
}

// The server's pushback sets the wait before the next attempt, whatever
// the backoff says.
func TestUnaryRetryHonoursPushback(t *testing.T) {
	srv := &flaky{script: []step{{code: codes.Unavailable, pushback: "1500"}}}
	fk := clock.NewFake()
	var mu sync.Mutex
	var waits []time.Duration
	p := retry.New[any](retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(time.Millisecond)), retry.WithClock(fk),
		retry.WithOnRetry(func(_ int, _ error, d time.Duration) {
			mu.Lock()
			waits = append(waits, d)
			mu.Unlock()
		}))
	c := unaryClient(t, srv, p)
	err := advancing(t, fk, 1, 1500*time.Millisecond, func() error {
		_, err := c.UnaryCall(bounded(t), req("x"))
		return err
	})
	if err != nil {
		t.Fatalf("UnaryCall: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]time.Duration{1500 * time.Millisecond}, waits); diff != "" {
		t.Errorf("retry waits mismatch (-want +got):\n%s", diff)
	}
}

// A negative or malformed pushback means "do not retry": one attempt, and
// the caller's error says why.
func TestUnaryPushbackDoNotRetry(t *testing.T) {
	for _, pb := range []string{"-1", "soon"} {
		t.Run(pb, func(t *testing.T) {
			srv := &flaky{def: step{code: codes.Unavailable, pushback: pb}}
			p := retry.New[any](retry.WithAttempts(5), retry.WithBackoff(backoff.Constant(0)))
			c := unaryClient(t, srv, p)
			_, err := c.UnaryCall(bounded(t), req("x"))
			var se *resiliencegrpc.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("UnaryCall error = %v, want a *StatusError", err)
			}
			if diff := cmp.Diff([]any{codes.Unavailable, resilience.Never, int64(1)}, []any{status.Code(err), se.After, srv.hits.Load()}); diff != "" {
				t.Errorf("code, pushback, server hits mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// The breaker opens on failures, refuses without calling the server, and
// closes again when a trial succeeds after the cooldown.
func TestUnaryBreakerOpensAndRecovers(t *testing.T) {
	srv := &flaky{script: []step{{code: codes.Unavailable}, {code: codes.Unavailable}, {code: codes.Unavailable}}}
	fk := clock.NewFake()
	b := breaker.New(breaker.WithThreshold(3), breaker.WithCooldown(10*time.Second), breaker.WithClock(fk))
	c := unaryClient(t, srv, breaker.Policy[any](b))
	for i := range 3 {
		if _, err := c.UnaryCall(bounded(t), req("x")); status.Code(err) != codes.Unavailable {
			t.Fatalf("call %d: error %v, want Unavailable", i+1, err)
		}
	}
	if diff := cmp.Diff(breaker.Open, b.State()); diff != "" {
		t.Fatalf("breaker state after 3 failures mismatch (-want +got):\n%s", diff)
	}
	_, err := c.UnaryCall(bounded(t), req("x"))
	if !errors.Is(err, breaker.ErrOpen) || status.Code(err) != codes.Unavailable {
		t.Errorf("call while open: error %v (code %v), want breaker.ErrOpen as Unavailable", err, status.Code(err))
	}
	if after, ok := resilience.RetryAfter(err); !ok || after != 10*time.Second {
		t.Errorf("call while open: RetryAfter = %v, %v; want 10s, true", after, ok)
	}
	if diff := cmp.Diff(int64(3), srv.hits.Load()); diff != "" {
		t.Errorf("server hits while open mismatch (-want +got):\n%s", diff)
	}
	fk.Advance(10 * time.Second)
	if _, err := c.UnaryCall(bounded(t), req("x")); err != nil {
		t.Fatalf("trial call after the cooldown: %v", err)
	}
	if diff := cmp.Diff(breaker.Closed, b.State()); diff != "" {
		t.Errorf("breaker state after a good trial mismatch (-want +got):\n%s", diff)
	}
}

// The caller's cancellation is not the server's failure: the breaker does
// not count it, and the caller gets Canceled.
func TestUnaryCallerCancelIsNeutral(t *testing.T) {
	srv := &flaky{def: step{hang: true}, arrived: make(chan struct{}, 1)}
	b := breaker.New(breaker.WithThreshold(1))
	c := unaryClient(t, srv, resilience.Then(retry.New[any](retry.WithBackoff(backoff.Constant(0))), breaker.Policy[any](b)))
	ctx, cancel := context.WithCancel(bounded(t))
	errc := make(chan error, 1)
	go func() {
		_, err := c.UnaryCall(ctx, req("x"))
		errc <- err
	}()
	await(t, srv.arrived, "the call to reach the server")
	cancel()
	err := await(t, errc, "the cancelled call to return")
	if !errors.Is(err, context.Canceled) || status.Code(err) != codes.Canceled {
		t.Errorf("error %v (code %v), want context.Canceled as Canceled", err, status.Code(err))
	}
	got := b.Counts()
	if diff := cmp.Diff([]any{breaker.Closed, uint64(0), int64(1)}, []any{b.State(), got.Failures, srv.hits.Load()}); diff != "" {
		t.Errorf("breaker state, failures, server hits mismatch (-want +got):\n%s", diff)
	}
}

// DeadlineExceeded sent by the server while the caller's deadline has not
// passed (the server's own deadline on its dependency) is a failure: the
// breaker counts it and the retry retries.
func TestUnaryServerDeadlineExceededIsFailure(t *testing.T) {
	srv := &flaky{script: []step{{code: codes.DeadlineExceeded}}}
	b := breaker.New(breaker.WithThreshold(5))
	p := resilience.Then(retry.New[any](retry.WithBackoff(backoff.Constant(0))), breaker.Policy[any](b))
	c := unaryClient(t, srv, p)
	if _, err := c.UnaryCall(bounded(t), req("x")); err != nil {
		t.Fatalf("UnaryCall: %v", err)
	}
	got := b.Counts()
	if diff := cmp.Diff([]any{uint64(1), uint64(1), int64(2)}, []any{got.Failures, got.Successes, srv.hits.Load()}); diff != "" {
		t.Errorf("breaker failures, successes, server hits mismatch (-want +got):\n%s", diff)
	}
}

// When the caller's own deadline passes, its context's error passes to the
// policies: the retry stops, and the caller gets DeadlineExceeded.
func TestUnaryCallerDeadlinePasses(t *testing.T) {
	srv := &flaky{def: step{hang: true}}
	c := unaryClient(t, srv, retry.New[any](retry.WithAttempts(5), retry.WithBackoff(backoff.Constant(0))))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.UnaryCall(ctx, req("x"))
	if !errors.Is(err, context.DeadlineExceeded) || status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("error %v (code %v), want context.DeadlineExceeded as DeadlineExceeded", err, status.Code(err))
	}
	// The one attempt may not reach the server within the deadline on a
	// loaded machine; no second one is made.
	if hits := srv.hits.Load(); hits > 1 {
		t.Errorf("%d server hits, want at most 1: the retry stops at the caller's deadline", hits)
	}
}

// Each attempt's deadline, the timeout's or the caller's if earlier, goes
// to the server; a timeout's expiry is a failure the retry retries.
func TestUnaryDeadlinesPropagate(t *testing.T) {
	srv := &flaky{script: []step{{hang: true}}}
	p := resilience.Then(retry.New[any](retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(0))), timeout.New[any](time.Second))
	c := unaryClient(t, srv, p)
	if _, err := c.UnaryCall(bounded(t), req("x")); err != nil {
		t.Fatalf("UnaryCall: %v", err)
	}
	short, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := c.UnaryCall(short, req("x")); err != nil {
		t.Fatalf("UnaryCall with the caller's 500ms deadline: %v", err)
	}
	d := srv.callDeadlines()
	if len(d) != 3 {
		t.Fatalf("server saw %d calls, want 3", len(d))
	}
	for i, max := range []time.Duration{time.Second, time.Second, 500 * time.Millisecond} {
		if d[i] <= 0 || d[i] > max {
			t.Errorf("call %d: the server's deadline was %v away, want in (0, %v]", i+1, d[i], max)
		}
	}
}

func TestUnaryPerMethodPolicy(t *testing.T) {
	srv := &flaky{def: step{code: codes.Unavailable}}
	once := retry.New[any](retry.WithAttempts(1))
	thrice := retry.New[any](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0)))
	c := unaryClient(t, srv, once, resiliencegrpc.WithMethod(testpb.TestService_UnaryCall_FullMethodName, thrice))
	_, _ = c.EmptyCall(bounded(t), &testpb.Empty{})
	emptyHits := srv.hits.Load()
	_, _ = c.UnaryCall(bounded(t), req("x"))
	if diff := cmp.Diff([]int64{1, 3}, []int64{emptyHits, srv.hits.Load() - emptyHits}); diff != "" {
		t.Errorf("server hits of EmptyCall (default policy), UnaryCall (its own) mismatch (-want +got):\n%s", diff)
	}
}

// A method's options override the interceptor's; the ones it does not set
// are the interceptor's.
func TestUnaryPerMethodOptions(t *testing.T) {
	srv := &flaky{def: step{code: codes.NotFound}}
	thrice := retry.New[any](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0)))
	never := func(*status.Status) bool { return false }
	always := func(s *status.Status) bool { return s.Code() != codes.OK }
	c := unaryClient(t, srv, thrice,
		resiliencegrpc.WithMethod(testpb.TestService_EmptyCall_FullMethodName, thrice, resiliencegrpc.WithClassify(never)),
		resiliencegrpc.WithMethod(testpb.TestService_UnaryCall_FullMethodName, thrice),
		resiliencegrpc.WithClassify(always))
	_, _ = c.EmptyCall(bounded(t), &testpb.Empty{})
	emptyHits := srv.hits.Load()
	_, _ = c.UnaryCall(bounded(t), req("x"))
	if diff := cmp.Diff([]int64{1, 3}, []int64{emptyHits, srv.hits.Load() - emptyHits}); diff != "" {
		t.Errorf("server hits of EmptyCall (its classify), UnaryCall (the interceptor's) mismatch (-want +got):\n%s", diff)
	}
}

func TestWithMethodPanics(t *testing.T) {
	for _, name := range []string{"", "UnaryCall", "/svc", "/svc/", "//m", "/a/b/c", "svc/m"} {
		func() {
			defer func() {
				r := recover()
				if s, _ := r.(string); s == "" || s[:len("resiliencegrpc: WithMethod")] != "resiliencegrpc: WithMethod" {
					t.Errorf("WithMethod(%q) panicked with %v, want a resiliencegrpc: WithMethod message", name, r)
				}
			}()
			resiliencegrpc.WithMethod(name, resilience.Policy[any]{})
		}()
	}
	func() {
		defer func() {
			if diff := cmp.Diff("resiliencegrpc: WithMethod option must not be nil", recover()); diff != "" {
				t.Errorf("a nil option of WithMethod: panic mismatch (-want +got):\n%s", diff)
			}
		}()
		resiliencegrpc.WithMethod("/s/m", resilience.Policy[any]{}, resiliencegrpc.WithGuardNames(), nil)
	}()
	defer func() {
		if r := recover(); r == nil {
			t.Errorf("a WithMethod inside a WithMethod did not panic")
		}
	}()
	resiliencegrpc.UnaryClientInterceptor(resilience.Policy[any]{}, resiliencegrpc.WithMethod("/s/m", resilience.Policy[any]{}, resiliencegrpc.WithMethod("/s/n", resilience.Policy[any]{})))
}

// A hedge's attempts run at once: each decodes into a reply of its own
// (the race detector sees two attempts decoding into one), and the
// winner's reaches the caller whole.
func TestUnaryHedgeWinnerReply(t *testing.T) {
	fk := clock.NewFake()
	gate := make(chan struct{})
	srv := &flaky{
		script:  []step{{gate: gate, body: "first attempt"}, {gate: gate, body: "hedged attempt"}},
		arrived: make(chan struct{}, 2),
	}
	// The first result to come is turned down, so that both attempts
	// decode their replies.
	var turnedDown atomic.Bool
	accept := func(_ any, err error) bool { return err == nil && !turnedDown.CompareAndSwap(false, true) }
	c := unaryClient(t, srv, hedge.New[any](time.Second, hedge.WithClock(fk), hedge.WithAccept(accept)))
	type result struct {
		resp *testpb.SimpleResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := c.UnaryCall(bounded(t), req("x"))
		done <- result{resp, err}
	}()
	await(t, srv.arrived, "the first attempt to reach the server")
	if err := fk.BlockUntil(bounded(t), 1); err != nil {
		t.Fatalf("the hedge armed no timer within %v", liveBound)
	}
	fk.Advance(time.Second)
	await(t, srv.arrived, "the hedged attempt to reach the server")
	close(gate) // both answer at once
	r := await(t, done, "the hedged call to return")
	if r.err != nil {
		t.Fatalf("UnaryCall: %v", r.err)
	}
	if got := string(r.resp.GetPayload().GetBody()); got != "first attempt" && got != "hedged attempt" {
		t.Errorf("reply %q, want one attempt's reply whole", got)
	}
}

// A Fallback may answer with a reply of the call's type; another value is
// an Internal error.
func TestUnaryFallbackReply(t *testing.T) {
	srv := &flaky{def: step{code: codes.Unavailable}}
	cached := resilience.Fallback(func(context.Context, error) (any, error) {
		return &testpb.SimpleResponse{Payload: &testpb.Payload{Body: []byte("cached")}}, nil
	})
	c := unaryClient(t, srv, cached)
	resp, err := c.UnaryCall(bounded(t), req("x"))
	if err != nil {
		t.Fatalf("UnaryCall: %v", err)
	}
	if diff := cmp.Diff("cached", string(resp.GetPayload().GetBody())); diff != "" {
		t.Errorf("reply mismatch (-want +got):\n%s", diff)
	}
	if _, err := c.EmptyCall(bounded(t), &testpb.Empty{}); status.Code(err) != codes.Internal {
		t.Errorf("EmptyCall answered with a SimpleResponse: error %v, want Internal", err)
	}
}

// An attempt that a layer starts after the call returned is not made.
func TestUnaryAttemptAfterReturnIsNotMade(t *testing.T) {
	srv := &flaky{}
	var next resilience.Next[any]
	keep := resilience.New("keep", func(ctx context.Context, n resilience.Next[any]) (any, error) {
		next = n
		return n.Call(ctx)
	})
	c := unaryClient(t, srv, keep)
	if _, err := c.UnaryCall(bounded(t), req("x")); err != nil {
		t.Fatalf("UnaryCall: %v", err)
	}
	_, err := next.Call(bounded(t))
	if !errors.Is(err, resilience.ErrRefused) {
		t.Errorf("late attempt error %v, want one matching resilience.ErrRefused", err)
	}
	if diff := cmp.Diff("resiliencegrpc: attempt started after the call returned", err.Error()); diff != "" {
		t.Errorf("late attempt message mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(int64(1), srv.hits.Load()); diff != "" {
		t.Errorf("server hits mismatch (-want +got):\n%s", diff)
	}
}
