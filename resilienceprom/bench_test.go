package resilienceprom_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/resilienceprom"
	"github.com/f0b5b96b/resilience/resilienceprom/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// exported returns a Collector with a registry holding a breaker "b", and
// the breaker's policy observed by the Collector.
func exported(tb testing.TB) (*resilienceprom.Collector, resilience.Policy[int]) {
	tb.Helper()
	reg := telemetry.NewRegistry()
	c := newCollector(tb, resilienceprom.WithRegistry(reg))
	return c, exporttest.Breaker(tb, c, reg)
}

// BenchmarkBreakerClosed is a success through a closed breaker: bare, and
// with the exporter attached (the Collector as its observer, the breaker
// in the Collector's registry). A success emits no event, so the exporter
// costs nothing on this path.
func BenchmarkBreakerClosed(b *testing.B) {
	_, p := exported(b)
	exporttest.BenchBreakerClosed(b, p)
}

// BenchmarkObserve is one event counted by the Collector: a refusal, and a
// wait (recorded in resilience_wait_duration_seconds).
func BenchmarkObserve(b *testing.B) {
	c, _ := exported(b)
	exporttest.BenchObserve(b, c, downError{})
}

// BenchmarkMeasure is a success through the breaker between a Measure's
// Call and Attempt layers.
func BenchmarkMeasure(b *testing.B) {
	c, p := exported(b)
	l := resilienceprom.Measure[int](c, "b", 3)
	exporttest.BenchDo(b, resilience.Then(l.Call, p, l.Attempt))
}

// BenchmarkCollect is one scrape's collection of a registry of one
// breaker, with the events of an outage counted.
func BenchmarkCollect(b *testing.B) {
	c, _ := exported(b)
	for _, e := range allTypes {
		e.Name = "b"
		c.Observe(e)
	}
	ch := make(chan prometheus.Metric, 1024) // more than one collection sends
	b.ReportAllocs()
	for b.Loop() {
		c.Collect(ch)
		for len(ch) > 0 {
			<-ch
		}
	}
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
