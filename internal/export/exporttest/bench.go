package exporttest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

// OK is an op that succeeds with 1.
func OK(context.Context) (int, error) { return 1, nil }

// Breaker returns the policy of a breaker named "b" observed by obs and
// registered in reg, for an exporter that is obs and reads reg: the
// exporter attached. It fails tb if reg refuses the breaker.
func Breaker(tb testing.TB, obs telemetry.Observer, reg *telemetry.Registry) resilience.Policy[int] {
	tb.Helper()
	b := breaker.New(breaker.WithName("b"), breaker.WithObserver(obs))
	if err := reg.Register(b); err != nil {
		tb.Fatal(err)
	}
	return breaker.Policy[int](b)
}

// BenchBreakerClosed is a success through a closed breaker: bare, and
// through exported, a [Breaker] with the exporter attached, in the
// sub-benchmarks "bare" and "exported".
func BenchBreakerClosed(b *testing.B, exported resilience.Policy[int]) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		p    resilience.Policy[int]
	}{
		{"bare", breaker.Policy[int](breaker.New(breaker.WithName("b")))},
		{"exported", exported},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.p.Do(ctx, OK); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchObserve is one event observed by obs: [Refused] in the
// sub-benchmark "refused", [Waiting] (with down) in "waiting".
func BenchObserve(b *testing.B, obs telemetry.Observer, down error) {
	for _, c := range []struct {
		name string
		e    telemetry.Event
	}{
		{"refused", Refused()},
		{"waiting", Waiting(down)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				obs.Observe(c.e)
			}
		})
	}
}

// BenchDo is a success of [OK] through p.
func BenchDo(b *testing.B, p resilience.Policy[int]) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Do(ctx, OK); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchBreakerClosedPaired makes successes through a closed breaker, bare
// and through exported (a [Breaker] with the exporter attached), in
// alternating blocks, and reports the median time of a call of each and
// the median of their ratio (exported/bare): on a loaded machine, where
// sequential sub-benchmarks swing, the pairs see the same load.
func BenchBreakerClosedPaired(b *testing.B, exported resilience.Policy[int]) {
	const block = 256
	bare := breaker.Policy[int](breaker.New(breaker.WithName("b")))
	ctx := context.Background()
	run := func(p resilience.Policy[int]) float64 {
		start := time.Now()
		for range block {
			if _, err := p.Do(ctx, OK); err != nil {
				b.Fatal(err)
			}
		}
		return float64(time.Since(start)) / block
	}
	const keep = 4096 // the last pairs, allocated before the loop
	bareNs, expNs, ratios := make([]float64, 0, keep), make([]float64, 0, keep), make([]float64, 0, keep)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		x, y := run(bare), run(exported)
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
