package resilienceotel_test

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/resilienceotel/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// exported returns a Metrics on an SDK provider, with a registry holding
// a breaker "b", and b's policy observed by it.
func exported(tb testing.TB) (*resilienceotel.Metrics, resilience.Policy[int]) {
	tb.Helper()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tb.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	reg := telemetry.NewRegistry()
	m, err := resilienceotel.New(mp, resilienceotel.WithRegistry(reg))
	if err != nil {
		tb.Fatal(err)
	}
	return m, exporttest.Breaker(tb, m, reg)
}

// BenchmarkBreakerClosed is a success through a closed breaker: bare, and
// with the exporter attached (the Metrics as its observer, the breaker in
// the Metrics' registry). A success emits no event, so the exporter costs
// nothing on this path.
func BenchmarkBreakerClosed(b *testing.B) {
	_, p := exported(b)
	exporttest.BenchBreakerClosed(b, p)
}

// BenchmarkObserve is one event counted by the Metrics: a refusal (an
// error.type read from its sentinel) and a wait (recorded in
// resilience.wait.duration).
func BenchmarkObserve(b *testing.B) {
	m, _ := exported(b)
	exporttest.BenchObserve(b, m, downError{})
}

// BenchmarkMeasure is a success through the breaker between a Measure's
// Call and Attempt layers: two clock readings and one histogram record
// per layer, and the attempts' context.
func BenchmarkMeasure(b *testing.B) {
	m, p := exported(b)
	l := resilienceotel.Measure[int](m, "b", 3)
	exporttest.BenchDo(b, resilience.Then(l.Call, p, l.Attempt))
}

// BenchmarkBreakerClosedPaired makes successes through a closed breaker,
// bare and with the exporter attached, in alternating blocks, and reports
// the median time of a call of each and the median of their ratio
// (exported/bare): on a loaded machine, where sequential sub-benchmarks
// swing, the pairs see the same load.
func BenchmarkBreakerClosedPaired(b *testing.B) {
	_, p := exported(b)
	exporttest.BenchBreakerClosedPaired(b, p)
}
