package resilienceotel_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/telemetry"
)

// bounds are the documented bucket bounds of the duration histograms, in
// seconds.
var bounds = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// newMetrics returns a Metrics on a fresh SDK MeterProvider with a
// ManualReader, and the reader.
func newMetrics(t *testing.T, opts ...resilienceotel.Option) (*resilienceotel.Metrics, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := resilienceotel.New(mp, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m, reader
}

// closeMetrics closes m and returns Close's error; it fails the test if
// Close has not returned within 2 s (a bound for failure only, never one
// of speed): Close waits for a making of instruments under way, and one
// that never ends fails the test instead of hanging it.
func closeMetrics(t *testing.T, m *resilienceotel.Metrics) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- m.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not return after 2s")
		return nil
	}
}

// collect returns the metrics of the Metrics' scope by name.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	out := make(map[string]metricdata.Metrics)
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != resilienceotel.ScopeName {
			t.Errorf("scope %q, want %q", sm.Scope.Name, resilienceotel.ScopeName)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

func names(ms map[string]metricdata.Metrics) []string {
	var out []string
	for n := range ms {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// assertData compares the data of metric name with want, timestamps aside.
func assertData(t *testing.T, got map[string]metricdata.Metrics, name string, want metricdata.Aggregation) {
	t.Helper()
	m, ok := got[name]
	if !ok {
		t.Errorf("no metric %q; have %v", name, names(got))
		return
	}
	if !metricdatatest.AssertAggregationsEqual(t, want, m.Data, metricdatatest.IgnoreTimestamp()) {
		t.Errorf("metric %q: data mismatch (above)", name)
	}
}

func counter(points ...metricdata.DataPoint[int64]) metricdata.Sum[int64] {
	return metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: points}
}

func pt[N int64 | float64](v N, kv ...attribute.KeyValue) metricdata.DataPoint[N] {
	return metricdata.DataPoint[N]{Attributes: attribute.NewSet(kv...), Value: v}
}

func fcounter(points ...metricdata.DataPoint[float64]) metricdata.Sum[float64] {
	return metricdata.Sum[float64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: points}
}

func igauge(points ...metricdata.DataPoint[int64]) metricdata.Gauge[int64] {
	return metricdata.Gauge[int64]{DataPoints: points}
}

func fgauge(points ...metricdata.DataPoint[float64]) metricdata.Gauge[float64] {
	return metricdata.Gauge[float64]{DataPoints: points}
}

func histogram(points ...metricdata.HistogramDataPoint[float64]) metricdata.Histogram[float64] {
	return metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality, DataPoints: points}
}

// hpt is the histogram point of the values vs, recorded in this order,
// with attributes kv.
func hpt(vs []float64, kv ...attribute.KeyValue) metricdata.HistogramDataPoint[float64] {
	p := metricdata.HistogramDataPoint[float64]{
		Attributes:   attribute.NewSet(kv...),
		Bounds:       bounds,
		BucketCounts: make([]uint64, len(bounds)+1),
		Count:        uint64(len(vs)),
	}
	lo, hi := vs[0], vs[0]
	for _, v := range vs {
		p.Sum += v
		lo, hi = min(lo, v), max(hi, v)
		i := sort.SearchFloat64s(bounds, v) // buckets are (bounds[i-1], bounds[i]]
		p.BucketCounts[i]++
	}
	p.Min, p.Max = metricdata.NewExtrema(lo), metricdata.NewExtrema(hi)
	return p
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// Attribute constructors with the documented keys.
func ptype(v string) attribute.KeyValue   { return attribute.String("resilience.policy.type", v) }
func pname(v string) attribute.KeyValue   { return attribute.String("resilience.policy.name", v) }
func outcome(v string) attribute.KeyValue { return attribute.String("resilience.outcome", v) }
func event(v telemetry.Type) attribute.KeyValue {
	return attribute.String("event.name", string(v))
}
func errtype(v string) attribute.KeyValue { return attribute.String("error.type", v) }
func attempt(n int) attribute.KeyValue    { return attribute.Int("resilience.attempt", n) }
func key(v string) attribute.KeyValue     { return attribute.String("resilience.key", v) }
func state(v string) attribute.KeyValue {
	return attribute.String("resilience.guard.state", v)
}
