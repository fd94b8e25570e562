package resiliencegrpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/failsafegrpc"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	fstimeout "github.com/failsafe-go/failsafe-go/timeout"
	"google.golang.org/grpc"
)

// BenchmarkUnary is one successful unary call over bufconn, in one run:
// bare; bare with a 1 s deadline of the caller's (what the timeout below
// costs gRPC: a grpc-timeout header, a timer on each side); through
// retry > breaker > timeout(1s) as this package's interceptor; and through
// the same three policies as failsafe-go's failsafegrpc interceptor. The
// goal is resiliencegrpc ≤ 1.1× bare.
func BenchmarkUnary(b *testing.B) {
	run := func(b *testing.B, deadline time.Duration, dopts ...grpc.DialOption) {
		c := serve(b, &flaky{}, nil, dopts...)
		in := req("ping")
		call := func() {
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if deadline > 0 {
				ctx, cancel = context.WithTimeout(ctx, deadline)
			}
			defer cancel()
			if _, err := c.UnaryCall(ctx, in); err != nil {
				b.Fatalf("UnaryCall: %v", err)
			}
		}
		call()
		b.ReportAllocs()
		for b.Loop() {
			call()
		}
	}
	b.Run("bare", func(b *testing.B) { run(b, 0) })
	b.Run("bare-deadline", func(b *testing.B) { run(b, time.Second) })
	b.Run("resiliencegrpc", func(b *testing.B) {
		p := resilience.Then(
			retry.New[any](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(10*time.Millisecond))),
			breaker.Policy[any](breaker.New()),
			timeout.New[any](time.Second),
		)
		run(b, 0, grpc.WithUnaryInterceptor(resiliencegrpc.UnaryClientInterceptor(p)))
	})
	b.Run("failsafegrpc", func(b *testing.B) {
		rp := retrypolicy.NewBuilder[any]().WithMaxAttempts(3).WithDelay(10 * time.Millisecond).Build()
		cb := circuitbreaker.NewWithDefaults[any]()
		to := fstimeout.New[any](time.Second)
		run(b, 0, grpc.WithUnaryInterceptor(failsafegrpc.NewUnaryClientInterceptor[any](rp, cb, to)))
	})
}
