package resilienceotel_test

import (
	"context"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/resilienceotel/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// queueValues are the values of a queue of one's own: a gauge and a
// counter.
func queueValues(depth, served float64) []telemetry.Value {
	return []telemetry.Value{
		{Name: "depth", Value: depth},
		{Name: "served", Type: telemetry.CounterValue, Value: served},
	}
}

// registerAll registers guards in reg, in this order.
func registerAll(t *testing.T, reg *telemetry.Registry, guards ...telemetry.Snapshot) {
	t.Helper()
	for _, s := range guards {
		if err := reg.Register(exporttest.FakeGuard{S: s}); err != nil {
			t.Fatal(err)
		}
	}
}

// exportedNames returns the names of the metrics of a collection, in
// order, each as many times as the collection has it.
func exportedNames(t *testing.T, r *sdkmetric.ManualReader) []string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	var out []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out = append(out, m.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Two guards of one name whose kinds give one instrument name to a value
// (kinds "my queue" and "my_queue": an instrument name has underscores
// for what it may not hold) must not have their values merged into one
// series, where one gauge's value is lost and counters add: the guard
// whose kind comes first in the registry's order (the order of its
// snapshots, by name then kind: the order in which resilienceprom sends
// them, so that both exporters keep the same guard's series) keeps the
// series, the other's value is left out, counted in
// resilience.exporter.dropped at each collection. So whether the guards
// are registered before New or after it.
func TestCollidingGuardValues(t *testing.T) {
	for _, c := range []struct {
		name  string
		later bool
	}{{"before New", false}, {"after New", true}} {
		t.Run(c.name, func(t *testing.T) {
			reg := telemetry.NewRegistry()
			guards := []telemetry.Snapshot{
				{Kind: "my_queue", Name: "q", Values: queueValues(2, 20)}, // registered first, comes last in the registry's order
				{Kind: "my queue", Name: "q", Values: queueValues(1, 10)},
				{Kind: "my queue", Name: "r", Values: queueValues(3, 30)}, // of another name: no collision
			}
			if !c.later {
				registerAll(t, reg, guards...)
			}
			m, reader := newMetrics(t, resilienceotel.WithRegistry(reg))
			var dropped int64
			if c.later {
				registerAll(t, reg, guards...)
				collect(t, reader)
				m.WaitValues(t)
				dropped = 2
			}
			for range 2 {
				dropped += 2
				got := collect(t, reader)
				q, r := pname("q"), pname("r")
				assertData(t, got, "resilience.my_queue.depth", fgauge(pt(1.0, q), pt(3.0, r)))
				assertData(t, got, "resilience.my_queue.served", fcounter(pt(10.0, q), pt(30.0, r)))
				assertData(t, got, "resilience.exporter.dropped", counter(pt(dropped)))
			}
		})
	}
}

// OpenTelemetry's instrument names are case-insensitive (the SDK takes
// "resilience.Mine.depth" and "resilience.mine.depth" as one
// instrument): guards of one name whose kinds differ only in case
// collide too, and the one that comes first in the registry's order
// keeps the series.
func TestCollidingGuardValuesByCase(t *testing.T) {
	reg := telemetry.NewRegistry()
	registerAll(t, reg,
		telemetry.Snapshot{Kind: "mine", Name: "q", Values: queueValues(2, 20)},
		telemetry.Snapshot{Kind: "Mine", Name: "q", Values: queueValues(1, 10)},
	)
	_, reader := newMetrics(t, resilienceotel.WithRegistry(reg))
	want := []string{"resilience.Mine.depth", "resilience.Mine.served", "resilience.exporter.dropped", "resilience.exporter.sanitized", "resilience.guard.refused"}
	if diff := cmp.Diff(want, exportedNames(t, reader)); diff != "" {
		t.Errorf("metrics exported mismatch (-want +got):\n%s", diff)
	}
	got := collect(t, reader)
	assertData(t, got, "resilience.Mine.depth", fgauge(pt(1.0, pname("q"))))
	assertData(t, got, "resilience.Mine.served", fcounter(pt(10.0, pname("q"))))
	assertData(t, got, "resilience.exporter.dropped", counter(pt[int64](4)))
}

// A guard's value whose instrument name is one of the Metrics' own
// (kind "guard", values "state" and "refused") is left out and counted in
// resilience.exporter.dropped: it would be a second instrument of that
// name, of another type, in the export.
func TestGuardValueNamedLikeOwnInstrument(t *testing.T) {
	reg := telemetry.NewRegistry()
	registerAll(t, reg,
		telemetry.Snapshot{Kind: "guard", Name: "g", Values: []telemetry.Value{
			{Name: "state", Value: 7},
			{Name: "refused", Type: telemetry.CounterValue, Value: 9},
			{Name: "ok", Value: 1},
		}},
		telemetry.Snapshot{Kind: "exporter", Name: "g", Values: []telemetry.Value{{Name: "sanitized", Value: 5}}},
	)
	m, reader := newMetrics(t, resilienceotel.WithRegistry(reg))
	collect(t, reader)
	m.WaitValues(t)
	want := []string{"resilience.exporter.dropped", "resilience.exporter.sanitized", "resilience.guard.ok", "resilience.guard.refused"}
	if diff := cmp.Diff(want, exportedNames(t, reader)); diff != "" {
		t.Errorf("metrics exported mismatch (-want +got):\n%s", diff)
	}
	got := collect(t, reader)
	g := pname("g")
	assertData(t, got, "resilience.guard.refused", counter(pt[int64](0, ptype("guard"), g), pt[int64](0, ptype("exporter"), g)))
	assertData(t, got, "resilience.exporter.sanitized", counter(pt[int64](0)))
	assertData(t, got, "resilience.guard.ok", fgauge(pt(1.0, g)))
	assertData(t, got, "resilience.exporter.dropped", counter(pt[int64](9))) // 3 a collection, of 3
}

// Two guards of one name whose kinds read alike once made valid UTF-8
// ("b\xfead" and "b\xffad" are both sent as "b\uFFFDad") would give
// resilience.guard.refused and resilience.guard.state one series: the one
// that comes first in the registry's order keeps it, the other is left
// out and counted.
func TestCollidingGuardKinds(t *testing.T) {
	reg := telemetry.NewRegistry()
	registerAll(t, reg,
		telemetry.Snapshot{Kind: "b\xffad", Name: "q", State: "closed", Refused: 2},
		telemetry.Snapshot{Kind: "b\xfead", Name: "q", State: "open", Refused: 1},
	)
	_, reader := newMetrics(t, resilienceotel.WithRegistry(reg))
	got := collect(t, reader)
	invalidUTF8(t, got)
	kind, q := ptype("b\uFFFDad"), pname("q")
	assertData(t, got, "resilience.guard.refused", counter(pt[int64](1, kind, q)))
	assertData(t, got, "resilience.guard.state", igauge(pt[int64](1, kind, q, state("open"))))
	assertData(t, got, "resilience.exporter.dropped", counter(pt[int64](2)))
	assertData(t, got, "resilience.exporter.sanitized", counter(pt[int64](2)))
}

// recordingMeter is an SDK meter that records the names of the
// instruments of guards' values it makes (Float64 observables).
type recordingMeter struct {
	metric.Meter
	mu    *sync.Mutex
	names *[]string
}

func (m recordingMeter) record(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	*m.names = append(*m.names, name)
}

func (m recordingMeter) Float64ObservableGauge(name string, o ...metric.Float64ObservableGaugeOption) (metric.Float64ObservableGauge, error) {
	m.record(name)
	return m.Meter.Float64ObservableGauge(name, o...)
}

func (m recordingMeter) Float64ObservableCounter(name string, o ...metric.Float64ObservableCounterOption) (metric.Float64ObservableCounter, error) {
	m.record(name)
	return m.Meter.Float64ObservableCounter(name, o...)
}

type recordingProvider struct {
	metric.MeterProvider
	m recordingMeter
}

func (p recordingProvider) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	m := p.m
	m.Meter = p.MeterProvider.Meter(name, opts...)
	return m
}

// No instrument is made for a guard's value named like one of the
// Metrics' own instruments (each one a value's name can take), whether
// the guard is registered before New or after: the SDK would have two
// instruments of one name.
func TestGuardValueNamedLikeOwnInstrumentMakesNoInstrument(t *testing.T) {
	own := []telemetry.Snapshot{
		{Kind: "guard", Name: "g", Values: []telemetry.Value{{Name: "state", Value: 1}, {Name: "Refused", Value: 1}, {Name: "ok", Value: 1}}},
		{Kind: "exporter", Name: "g", Values: []telemetry.Value{{Name: "sanitized", Value: 1}, {Name: "dropped", Value: 1}}},
		{Kind: "call", Name: "g", Values: []telemetry.Value{{Name: "duration", Value: 1}}},
		{Kind: "attempt", Name: "g", Values: []telemetry.Value{{Name: "duration", Value: 1}}},
		{Kind: "wait", Name: "g", Values: []telemetry.Value{{Name: "duration", Value: 1}}},
	}
	for _, before := range []bool{true, false} {
		reader := sdkmetric.NewManualReader()
		sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		var names []string
		rp := recordingProvider{sdk, recordingMeter{mu: new(sync.Mutex), names: &names}}
		reg := telemetry.NewRegistry()
		if before {
			registerAll(t, reg, own...)
		}
		m, err := resilienceotel.New(rp, resilienceotel.WithRegistry(reg))
		if err != nil {
			t.Fatal(err)
		}
		if !before {
			registerAll(t, reg, own...)
		}
		collect(t, reader)
		m.WaitValues(t)
		collect(t, reader)
		rp.m.mu.Lock()
		got := append([]string(nil), names...)
		rp.m.mu.Unlock()
		if diff := cmp.Diff([]string{"resilience.guard.ok"}, got); diff != "" {
			t.Errorf("registered before New %v: instruments made for guards' values mismatch (-want +got):\n%s", before, diff)
		}
		if err := closeMetrics(t, m); err != nil {
			t.Fatal(err)
		}
		_ = sdk.Shutdown(context.Background())
	}
}
