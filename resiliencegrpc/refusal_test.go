package resiliencegrpc_test

import (
	"strings"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// refusedOnce serves with a limiter named "api" of 5 tokens a second and a
// burst of 1 at the place that where says (the interceptor or the tap),
// takes its token, and moves its clock 2.7ms on: the next call is refused
// with a hint of 197.3ms, a pushback of 198ms. It returns the refused
// call's trailer and error, made by a client with the dial options given.
func refusedOnce(t *testing.T, where string, sopts []resiliencegrpc.Option, dopts ...grpc.DialOption) (metadata.MD, error) {
	t.Helper()
	fk := clock.NewFake()
	lim := ratelimit.New(5, 1, ratelimit.WithClock(fk), ratelimit.WithName("api"))
	p := ratelimit.Policy[struct{}](lim)
	var so grpc.ServerOption
	switch where {
	case "interceptor":
		so = grpc.UnaryInterceptor(resiliencegrpc.UnaryServerInterceptor(p, sopts...))
	case "tap":
		so = grpc.InTapHandle(resiliencegrpc.InHandle(p, sopts...))
	}
	c := serve(t, &flaky{}, []grpc.ServerOption{so}, dopts...)
	if _, err := c.UnaryCall(bounded(t), req("x")); err != nil {
		t.Fatalf("first call: %v", err)
	}
	fk.Advance(2700 * time.Microsecond)
	var trailer metadata.MD
	_, err := c.UnaryCall(bounded(t), req("x"), grpc.Trailer(&trailer))
	return trailer, err
}

// A remote client gets a generic message, which states the pushback once,
// and the pushback itself; the server's guard names stay on the server.
func TestServerRefusalMessageIsGeneric(t *testing.T) {
	for _, where := range []string{"interceptor", "tap"} {
		t.Run(where, func(t *testing.T) {
			_, err := refusedOnce(t, where, nil)
			delay, _ := retryDelay(err)
			if diff := cmp.Diff([]any{codes.ResourceExhausted, "resource exhausted: retry after 198ms", 198 * time.Millisecond},
				[]any{status.Code(err), status.Convert(err).Message(), delay}); diff != "" {
				t.Errorf("code, message, RetryInfo seen by a plain client mismatch (-want +got):\n%s", diff)
			}

			_, err = refusedOnce(t, where, nil, grpc.WithUnaryInterceptor(resiliencegrpc.UnaryClientInterceptor(resilience.Policy[any]{})))
			if diff := cmp.Diff("resiliencegrpc: ResourceExhausted: resource exhausted: retry after 198ms", err.Error()); diff != "" {
				t.Errorf("the client interceptor's error mismatch (-want +got):\n%s", diff)
			}
			if n := strings.Count(err.Error(), "retry after"); n != 1 {
				t.Errorf("%q states the hint %d times, want once", err, n)
			}
		})
	}
}

// The interceptor sends the pushback trailer with the generic message.
func TestServerRefusalPushbackTrailer(t *testing.T) {
	trailer, err := refusedOnce(t, "interceptor", nil)
	if diff := cmp.Diff([]any{codes.ResourceExhausted, []string{"198"}}, []any{status.Code(err), trailer.Get(resiliencegrpc.PushbackKey)}); diff != "" {
		t.Errorf("code, pushback mismatch (-want +got):\n%s", diff)
	}
}

// WithGuardNames sends the refusal's reason and guard name, and the
// pushback once, rounded as the pushback is.
func TestServerRefusalWithGuardNames(t *testing.T) {
	for _, where := range []string{"interceptor", "tap"} {
		t.Run(where, func(t *testing.T) {
			_, err := refusedOnce(t, where, []resiliencegrpc.Option{resiliencegrpc.WithGuardNames()})
			if diff := cmp.Diff([]any{codes.ResourceExhausted, "ratelimit: limited (api): retry after 198ms"},
				[]any{status.Code(err), status.Convert(err).Message()}); diff != "" {
				t.Errorf("code, message mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
