package resiliencegrpc_test

import (
	"context"
	"slices"
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
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// BenchmarkUnary is one successful unary call over bufconn, in one run:
// bare; bare with a 1 s deadline of the caller's (what the timeout below
// costs gRPC: a grpc-timeout header, a timer on each side); through
// retry > breaker > timeout(1s) as this package's interceptor; and through
// the same three policies as failsafe-go's failsafegrpc interceptor.
// README.md gives the figures, as ratios to the bare call.
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

// BenchmarkUnaryPaired makes the calls of BenchmarkUnary in turns, one of
// each per iteration in a rotating order, and reports the median time of
// each kind and the ratios to the bare call: on a machine whose load
// changes during the run, calls made side by side see the same load, where
// sub-benchmarks run one after another do not. An iteration is four calls.
func BenchmarkUnaryPaired(b *testing.B) {
	p := resilience.Then(
		retry.New[any](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(10*time.Millisecond))),
		breaker.Policy[any](breaker.New()),
		timeout.New[any](time.Second),
	)
	rp := retrypolicy.NewBuilder[any]().WithMaxAttempts(3).WithDelay(10 * time.Millisecond).Build()
	kinds := []struct {
		name     string
		deadline time.Duration
		c        testpb.TestServiceClient
	}{
		{"bare", 0, serve(b, &flaky{}, nil)},
		{"bare-deadline", time.Second, serve(b, &flaky{}, nil)},
		{"resiliencegrpc", 0, serve(b, &flaky{}, nil, grpc.WithUnaryInterceptor(resiliencegrpc.UnaryClientInterceptor(p)))},
		{"failsafegrpc", 0, serve(b, &flaky{}, nil, grpc.WithUnaryInterceptor(failsafegrpc.NewUnaryClientInterceptor[any](
			rp, circuitbreaker.NewWithDefaults[any](), fstimeout.New[any](time.Second))))},
	}
	in := req("ping")
	call := func(i int) time.Duration {
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		start := time.Now()
		if kinds[i].deadline > 0 {
			ctx, cancel = context.WithTimeout(ctx, kinds[i].deadline)
		}
		_, err := kinds[i].c.UnaryCall(ctx, in)
		cancel()
		took := time.Since(start)
		if err != nil {
			b.Fatalf("%s: UnaryCall: %v", kinds[i].name, err)
		}
		return took
	}
	for i := range kinds {
		call(i) // connect
	}
	times := make([][]time.Duration, len(kinds))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for j := range kinds {
			i := (n + j) % len(kinds)
			times[i] = append(times[i], call(i))
		}
		n++
	}
	medians := make([]float64, len(kinds))
	for i, ts := range times {
		slices.Sort(ts)
		medians[i] = float64(ts[len(ts)/2])
		b.ReportMetric(medians[i], kinds[i].name+"-ns/call")
	}
	for i := 1; i < len(kinds); i++ {
		b.ReportMetric(medians[i]/medians[0], kinds[i].name+"/bare")
	}
	b.ReportMetric(medians[2]/medians[1], "resiliencegrpc/bare-deadline")
	b.ReportMetric(medians[3]/medians[1], "failsafegrpc/bare-deadline")
}
