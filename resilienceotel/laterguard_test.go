package resilienceotel_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/resilienceotel/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// gatedProvider is a MeterProvider whose meters register every callback
// after the first (New's) only once gate is closed: it holds the making
// of the instruments of a guard registered after New where a slow
// goroutine would.
type gatedProvider struct {
	metric.MeterProvider
	gate  chan struct{}
	calls *atomic.Int64
}

func (p gatedProvider) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	return gatedMeter{p.MeterProvider.Meter(name, opts...), p}
}

type gatedMeter struct {
	metric.Meter
	p gatedProvider
}

func (m gatedMeter) RegisterCallback(f metric.Callback, instruments ...metric.Observable) (metric.Registration, error) {
	if m.p.calls.Add(1) > 1 {
		<-m.p.gate
	}
	return m.Meter.RegisterCallback(f, instruments...)
}

// A guard registered after New has its values reported from the first
// collection after the goroutine that the first collection to see them
// starts has made their instruments, not from the next collection
// whatever: collections back to back before that do not have them
// (resilience.guard.refused and resilience.guard.state they have from the
// first).
func TestLaterGuardValuesWaitForTheirInstruments(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
	gp := gatedProvider{sdk, make(chan struct{}), new(atomic.Int64)}
	var release sync.Once
	open := func() { release.Do(func() { close(gp.gate) }) }
	t.Cleanup(open)
	reg := telemetry.NewRegistry()
	m, err := resilienceotel.New(gp, resilienceotel.WithRegistry(reg))
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(exporttest.FakeGuard{S: telemetry.Snapshot{Kind: "mine", Name: "g", Refused: 3, Values: []telemetry.Value{{Name: "depth", Value: 4}}}}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // back to back: the instrument is not made yet
		got := collect(t, reader)
		if _, ok := got["resilience.mine.depth"]; ok {
			t.Errorf("collection %d has the value before its instrument is made", i+1)
		}
		assertData(t, got, "resilience.guard.refused", counter(pt[int64](3, ptype("mine"), pname("g"))))
	}
	open()
	m.WaitValues(t)
	assertData(t, collect(t, reader), "resilience.mine.depth", fgauge(pt(4.0, pname("g"))))
	if err := closeMetrics(t, m); err != nil {
		t.Fatal(err)
	}
}
