package resilienceotel_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/resilienceotel/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// failingMeter fails to make the instrument named fail.
type failingMeter struct {
	noop.Meter
	fail string
}

var errMake = errors.New("cannot make it")

func (m failingMeter) err(name string) error {
	if name == m.fail {
		return errMake
	}
	return nil
}

func (m failingMeter) Int64ObservableCounter(name string, o ...metric.Int64ObservableCounterOption) (metric.Int64ObservableCounter, error) {
	c, _ := m.Meter.Int64ObservableCounter(name, o...)
	return c, m.err(name)
}

func (m failingMeter) Int64ObservableGauge(name string, o ...metric.Int64ObservableGaugeOption) (metric.Int64ObservableGauge, error) {
	g, _ := m.Meter.Int64ObservableGauge(name, o...)
	return g, m.err(name)
}

func (m failingMeter) Float64Histogram(name string, o ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	h, _ := m.Meter.Float64Histogram(name, o...)
	return h, m.err(name)
}

type failingProvider struct {
	noop.MeterProvider
	fail string
}

func (p failingProvider) Meter(string, ...metric.MeterOption) metric.Meter {
	return failingMeter{fail: p.fail}
}

// TestNewInstrumentError: New returns an error wrapping the provider's,
// and no Metrics, when the provider fails to make any one of its
// instruments.
func TestNewInstrumentError(t *testing.T) {
	for _, name := range []string{
		"resilience.calls", "resilience.events", "resilience.call.duration", "resilience.attempt.duration",
		"resilience.wait.duration", "resilience.exporter.sanitized", "resilience.guard.refused", "resilience.guard.state",
		"resilience.exporter.dropped",
	} {
		m, err := resilienceotel.New(failingProvider{fail: name}, resilienceotel.WithRegistry(telemetry.NewRegistry()))
		if m != nil || !errors.Is(err, errMake) || !strings.HasPrefix(err.Error(), "resilienceotel: ") {
			t.Errorf("%s fails: New = %v, %v; want nil and an error wrapping the provider's", name, m, err)
		}
	}
}

// TestCloseStopsObserving: after Close, the registry's events no longer
// reach the Metrics (its histograms, which stay, record no new wait); a
// Metrics without a registry closes too.
func TestCloseStopsObserving(t *testing.T) {
	reg := telemetry.NewRegistry()
	m, reader := newMetrics(t, resilienceotel.WithRegistry(reg))
	wait := telemetry.Event{Type: retry.EventWaiting, Name: "r", Attempt: 1, Wait: time.Second}
	reg.Observe(wait)
	if err := closeMetrics(t, m); err != nil {
		t.Fatal(err)
	}
	reg.Observe(wait)
	got := collect(t, reader)["resilience.wait.duration"]
	if n := histogramCount(t, got); n != 1 {
		t.Errorf("resilience.wait.duration counts %d waits, want 1: the one before Close", n)
	}

	plain, _ := newMetrics(t)
	if err := closeMetrics(t, plain); err != nil {
		t.Errorf("Close without a registry: %v", err)
	}
}

// errorsSeen installs an OpenTelemetry error handler for the test and
// returns what it has seen so far.
func errorsSeen(t *testing.T) func() []error {
	var mu sync.Mutex
	var seen []error
	prev := otel.GetErrorHandler()
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, err)
	}))
	t.Cleanup(func() { otel.SetErrorHandler(prev) })
	return func() []error {
		mu.Lock()
		defer mu.Unlock()
		return append([]error(nil), seen...)
	}
}

// TestGuardsRegisteredLater: guards registered after New, one value at a
// time, have their values reported from the collection after the first
// that saw them, the earlier guards' values too; nothing goes to
// OpenTelemetry's error handler.
func TestGuardsRegisteredLater(t *testing.T) {
	seen := errorsSeen(t)
	reg := telemetry.NewRegistry()
	m, reader := newMetrics(t, resilienceotel.WithRegistry(reg))
	for i, kind := range []telemetry.Kind{"first", "second", "third"} {
		if err := reg.Register(exporttest.FakeGuard{S: telemetry.Snapshot{Kind: kind, Name: "g", Values: []telemetry.Value{{Name: "depth", Value: float64(i + 1)}}}}); err != nil {
			t.Fatal(err)
		}
		collect(t, reader)
		m.WaitValues(t)
		got := collect(t, reader)
		for j, k := range []telemetry.Kind{"first", "second", "third"}[:i+1] {
			assertData(t, got, "resilience."+string(k)+".depth", fgauge(pt(float64(j+1), pname("g"))))
		}
	}
	if errs := seen(); len(errs) != 0 {
		t.Errorf("errors handled: %v", errs)
	}
}

// TestGuardsRegisteredBeforeAndAfterNew: the values of a guard registered
// before New are reported by every collection, also by those after a
// guard registered later has had its values' instruments made.
func TestGuardsRegisteredBeforeAndAfterNew(t *testing.T) {
	reg := telemetry.NewRegistry()
	if err := reg.Register(exporttest.FakeGuard{S: telemetry.Snapshot{Kind: "early", Name: "g", Values: []telemetry.Value{{Name: "depth", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	m, reader := newMetrics(t, resilienceotel.WithRegistry(reg))
	assertData(t, collect(t, reader), "resilience.early.depth", fgauge(pt(1.0, pname("g"))))
	if err := reg.Register(exporttest.FakeGuard{S: telemetry.Snapshot{Kind: "late", Name: "g", Values: []telemetry.Value{{Name: "depth", Value: 2}}}}); err != nil {
		t.Fatal(err)
	}
	assertData(t, collect(t, reader), "resilience.early.depth", fgauge(pt(1.0, pname("g"))))
	m.WaitValues(t)
	got := collect(t, reader)
	assertData(t, got, "resilience.early.depth", fgauge(pt(1.0, pname("g"))))
	assertData(t, got, "resilience.late.depth", fgauge(pt(2.0, pname("g"))))
	if err := closeMetrics(t, m); err != nil {
		t.Fatal(err)
	}
}

// TestGuardValueError: a guard's value whose instrument the provider
// cannot make (a name past OpenTelemetry's 255 characters) goes to
// OpenTelemetry's error handler, named by the package; the other values
// are reported.
func TestGuardValueError(t *testing.T) {
	seen := errorsSeen(t)
	reg := telemetry.NewRegistry()
	m, reader := newMetrics(t, resilienceotel.WithRegistry(reg))
	long := strings.Repeat("x", 300)
	if err := reg.Register(exporttest.FakeGuard{S: telemetry.Snapshot{Kind: "mine", Name: "g", Values: []telemetry.Value{{Name: long, Value: 1}, {Name: "ok", Value: 2}}}}); err != nil {
		t.Fatal(err)
	}
	collect(t, reader)
	m.WaitValues(t)
	assertData(t, collect(t, reader), "resilience.mine.ok", fgauge(pt(2.0, pname("g"))))
	errs := seen()
	if len(errs) == 0 || !strings.HasPrefix(errs[0].Error(), "resilienceotel: ") {
		t.Errorf("errors handled: %v, want one from resilienceotel", errs)
	}
	// The last collection saw the value without an instrument again, and
	// tries again to make it: Close waits for that, so that its error goes
	// to this test's handler, not a later test's.
	if err := closeMetrics(t, m); err != nil {
		t.Fatal(err)
	}
}

// histogramCount is the number of values a histogram of float64 holds.
func histogramCount(t *testing.T, m metricdata.Metrics) uint64 {
	t.Helper()
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("%s: %T, want a histogram", m.Name, m.Data)
	}
	var n uint64
	for _, p := range h.DataPoints {
		n += p.Count
	}
	return n
}
