package resilienceprom_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceprom"
	"github.com/f0b5b96b/resilience/telemetry"
)

// exported returns a Collector with a registry holding a breaker, and the
// breaker's policy observed by the Collector.
func exported(tb testing.TB) (*resilienceprom.Collector, resilience.Policy[int]) {
	tb.Helper()
	reg := telemetry.NewRegistry()
	c := resilienceprom.New(resilienceprom.WithRegistry(reg))
	b := breaker.New(breaker.WithName("b"), breaker.WithObserver(c))
	if err := reg.Register(b); err != nil {
		tb.Fatal(err)
	}
	return c, breaker.Policy[int](b)
}

func okOp(context.Context) (int, error) { return 1, nil }

// BenchmarkBreakerClosed is a success through a closed breaker: bare, and
// with the exporter attached (the Collector as its observer, the breaker
// in the Collector's registry). A success emits no event, so the exporter
// costs nothing on this path.
func BenchmarkBreakerClosed(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		p    resilience.Policy[int]
	}{
		{"bare", breaker.Policy[int](breaker.New(breaker.WithName("b")))},
		{"exported", func() resilience.Policy[int] { _, p := exported(b); return p }()},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.p.Do(ctx, okOp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkObserve is one event counted by the Collector: a refusal, and a
// wait (recorded in resilience_wait_duration_seconds).
func BenchmarkObserve(b *testing.B) {
	c, _ := exported(b)
	for _, tc := range []struct {
		name string
		e    telemetry.Event
	}{
		{"refused", telemetry.Event{Type: telemetry.BreakerRefused, Name: "b", Err: resilience.Refuse(breaker.ErrOpen, "b", time.Second), Wait: time.Second}},
		{"waiting", telemetry.Event{Type: telemetry.RetryWaiting, Name: "r", Attempt: 1, Err: downError{}, Wait: 100 * time.Millisecond}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.Observe(tc.e)
			}
		})
	}
}

// BenchmarkMeasure is a success through the breaker between a Measure's
// Call and Attempt layers.
func BenchmarkMeasure(b *testing.B) {
	c, p := exported(b)
	l := resilienceprom.Measure[int](c, "b", 3)
	p = resilience.Then(l.Call, p, l.Attempt)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Do(ctx, okOp); err != nil {
			b.Fatal(err)
		}
	}
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
	const block = 256
	bare := breaker.Policy[int](breaker.New(breaker.WithName("b")))
	_, exp := exported(b)
	ctx := context.Background()
	run := func(p resilience.Policy[int]) float64 {
		start := time.Now()
		for range block {
			if _, err := p.Do(ctx, okOp); err != nil {
				b.Fatal(err)
			}
		}
		return float64(time.Since(start)) / block
	}
	const keep = 4096 // the last pairs, allocated before the loop
	bareNs, expNs, ratios := make([]float64, 0, keep), make([]float64, 0, keep), make([]float64, 0, keep)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		x, y := run(bare), run(exp)
		if i < keep {
			bareNs, expNs, ratios = append(bareNs, x), append(expNs, y), append(ratios, y/x)
		} else {
			bareNs[i%keep], expNs[i%keep], ratios[i%keep] = x, y, y/x
		}
	}
	b.ReportMetric(median(bareNs), "bare-ns/call")
	b.ReportMetric(median(expNs), "exported-ns/call")
	b.ReportMetric(median(ratios), "exported/bare")
	b.ReportMetric(0, "ns/op") // per block pair: not a call's cost
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
