package main

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/dashboard"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resiliencehttp"
	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/resilienceprom"
	"github.com/f0b5b96b/resilience/telemetry"
)

// consumers makes both exporters, the dashboard and the health check
// over reg.
func consumers(b *testing.B, reg *telemetry.Registry) (*resilienceprom.Collector, *resilienceotel.Metrics, *dashboard.Dashboard) {
	c, err := resilienceprom.New(prometheus.NewRegistry(), resilienceprom.WithRegistry(reg))
	if err != nil {
		b.Fatal(err)
	}
	m, err := resilienceotel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())), resilienceotel.WithRegistry(reg))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = m.Close() })
	resiliencehttp.Health(reg)
	return c, m, dashboard.New(reg, nil)
}

func ok(context.Context) (string, error) { return "ok", nil }

// A successful call through retry > breaker, with latency for every
// consumer: the registry as the one observer (no extra layer) ...
func BenchmarkLatencyOneObserver(b *testing.B) {
	reg := telemetry.NewRegistry()
	consumers(b, reg)
	br := breaker.New(breaker.WithName("prices"), breaker.WithObserver(reg))
	p := resilience.Then(retry.New[string](retry.WithName("prices"), retry.WithObserver(reg)), breaker.Policy[string](br))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.Do(ctx, ok)
	}
}

// ... and the way without it: telemetry.Multi of the exporters, a
// Measure pair per exporter and the dashboard's Measure layer.
func BenchmarkLatencyMeasureLayers(b *testing.B) {
	c, m, dash := consumers(b, telemetry.NewRegistry()) // the policies observe the exporters, not the registry
	obs := telemetry.Multi(c, m)
	br := breaker.New(breaker.WithName("prices"), breaker.WithObserver(obs))
	pm := resilienceprom.Measure[string](c, "prices", 3)
	om := resilienceotel.Measure[string](m, "prices", 3)
	p := resilience.Then(pm.Call, om.Call,
		retry.New[string](retry.WithName("prices"), retry.WithObserver(obs)),
		pm.Attempt, om.Attempt, dashboard.Measure[string](dash, "prices"),
		breaker.Policy[string](br))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.Do(ctx, ok)
	}
}

// ... and with no observer at all: the cost latency adds to.
func BenchmarkLatencyNone(b *testing.B) {
	br := breaker.New(breaker.WithName("prices"))
	p := resilience.Then(retry.New[string](retry.WithName("prices")), breaker.Policy[string](br))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.Do(ctx, ok)
	}
}
