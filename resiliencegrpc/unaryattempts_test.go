package resiliencegrpc_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/hedge"
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

// What each attempt of a unary call is given and what the interceptor
// waits for, seen by a fake invoker.

// The interceptor returns once every attempt it started has returned: an
// attempt that a timeout WithAbandon gave up on is waited for.
func TestUnaryInterceptorWaitsForAnAbandonedAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var returned atomic.Bool
		invoker := func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
			<-ctx.Done()
			time.Sleep(time.Second) // a call returns a while after its cancellation
			returned.Store(true)
			return status.FromContextError(ctx.Err()).Err()
		}
		p := timeout.New[any](time.Second, timeout.WithAbandon(true))
		err := resiliencegrpc.UnaryClientInterceptor(p)(context.Background(), "/s/m", req("x"), new(testpb.SimpleResponse), nil, invoker)
		if status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("call error %v, want DeadlineExceeded", err)
		}
		if !returned.Load() {
			t.Errorf("the interceptor returned before the attempt the timeout abandoned did")
		}
	})
}

// marker is a call option of the caller's, which every attempt must get.
var marker = grpc.CallContentSubtype("marker")

// callOptions reports how many of opts are marker, and the trailer
// option's address, if any.
func callOptions(opts []grpc.CallOption) (markers int, trailer *metadata.MD) {
	for _, o := range opts {
		switch o := o.(type) {
		case grpc.ContentSubtypeCallOption:
			if o == marker {
				markers++
			}
		case grpc.TrailerCallOption:
			trailer = o.TrailerAddr
		}
	}
	return markers, trailer
}

// Every attempt, a retry's and a hedge's, gets the caller's call options
// (however many), and a trailer through which its pushback is read.
func TestUnaryAttemptsGetTheCallersOptions(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4, 6} {
		callerOpts := make([]grpc.CallOption, n)
		for i := range callerOpts {
			callerOpts[i] = marker
		}
		check := func(t *testing.T, attempt int, opts []grpc.CallOption) *metadata.MD {
			markers, trailer := callOptions(opts)
			if markers != n {
				t.Errorf("attempt %d got %d of the caller's %d options", attempt, markers, n)
			}
			if trailer == nil {
				t.Fatalf("attempt %d got no grpc.Trailer option", attempt)
			}
			return trailer
		}
		t.Run("retry", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				invoker := func(_ context.Context, _ string, _, _ any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
					k := int(calls.Add(1))
					*check(t, k, opts) = metadata.Pairs(resiliencegrpc.PushbackKey, "-1")
					return status.Error(codes.Unavailable, "down, do not retry")
				}
				p := retry.New[any](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0)))
				err := resiliencegrpc.UnaryClientInterceptor(p)(context.Background(), "/s/m", req("x"), new(testpb.SimpleResponse), nil, invoker, callerOpts...)
				var se *resiliencegrpc.StatusError
				if !errors.As(err, &se) || se.After != resilience.Never {
					t.Errorf("call error %v, want a *StatusError with the pushback's resilience.Never", err)
				}
				if got := calls.Load(); got != 1 {
					t.Errorf("%d attempts, want 1 (the pushback says not to retry)", got)
				}
			})
		})
		t.Run("hedge", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				invoker := func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
					k := int(calls.Add(1))
					check(t, k, opts)
					if k == 1 {
						<-ctx.Done()
						return status.FromContextError(ctx.Err()).Err()
					}
					return nil
				}
				err := resiliencegrpc.UnaryClientInterceptor(hedge.New[any](time.Second))(context.Background(), "/s/m", req("x"), new(testpb.SimpleResponse), nil, invoker, callerOpts...)
				if err != nil {
					t.Errorf("call: %v", err)
				}
				if got := calls.Load(); got != 2 {
					t.Errorf("%d attempts, want 2", got)
				}
			})
		})
	}
}

// Each attempt's pushback is its own: an attempt that fails without one
// after an attempt that had one carries none.
func TestUnaryPushbackIsTheAttemptsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		invoker := func(_ context.Context, _ string, _, _ any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
			if calls.Add(1) == 1 {
				_, trailer := callOptions(opts)
				*trailer = metadata.Pairs(resiliencegrpc.PushbackKey, "5000")
			}
			// The second attempt fails before its trailer is set, as a
			// call that never reached a server does.
			return status.Error(codes.Unavailable, "down")
		}
		p := retry.New[any](retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(0)))
		err := resiliencegrpc.UnaryClientInterceptor(p)(context.Background(), "/s/m", req("x"), new(testpb.SimpleResponse), nil, invoker)
		var se *resiliencegrpc.StatusError
		if !errors.As(err, &se) {
			t.Fatalf("call error %v, want a *StatusError", err)
		}
		if diff := cmp.Diff(time.Duration(0), se.After); diff != "" {
			t.Errorf("last attempt's pushback mismatch (-want +got):\n%s", diff)
		}
		if got := calls.Load(); got != 2 {
			t.Errorf("%d attempts, want 2", got)
		}
	})
}

// A call through the client interceptor costs 2 allocations beyond what the
// policy and the invoker allocate: the call's state and its op. The
// attempt that decodes into the caller's reply, the only one here, makes
// its call options (the caller's and a grpc.Trailer) in the call's state,
// with a few options or none; the trailer option, a pointer, allocates
// nothing.
func TestUnaryClientInterceptorAllocs(t *testing.T) {
	ctx := context.Background()
	request, reply := req("x"), new(testpb.SimpleResponse)
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	call := resiliencegrpc.UnaryClientInterceptor(resilience.Policy[any]{})
	opts := []grpc.CallOption{marker, marker}
	got := []float64{
		testing.AllocsPerRun(1000, func() { _ = call(ctx, "/s/m", request, reply, nil, invoker) }),
		testing.AllocsPerRun(1000, func() { _ = call(ctx, "/s/m", request, reply, nil, invoker, opts...) }),
	}
	if diff := cmp.Diff([]float64{2, 2}, got); diff != "" {
		t.Errorf("allocations per call without, with options mismatch (-want +got):\n%s", diff)
	}
}

func TestUnaryClientInterceptorNilOptionPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"unary": func() { resiliencegrpc.UnaryClientInterceptor(resilience.Policy[any]{}, nil) },
		"stream": func() {
			resiliencegrpc.StreamClientInterceptor(resilience.Policy[any]{}, resiliencegrpc.WithGuardNames(), nil)
		},
	} {
		func() {
			defer func() {
				if diff := cmp.Diff("resiliencegrpc: interceptor option must not be nil", recover()); diff != "" {
					t.Errorf("%s: panic mismatch (-want +got):\n%s", name, diff)
				}
			}()
			f()
		}()
	}
}
