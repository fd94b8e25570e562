package resilienceotel_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/resilienceotel/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

var (
	errRegister   = errors.New("cannot register")
	errUnregister = errors.New("cannot unregister")
)

// flakyMeter is an SDK meter whose RegisterCallback fails after the first
// (New's) when failRegister is set, and whose registrations fail to
// unregister when failUnregister is.
type flakyMeter struct {
	metric.Meter
	failRegister, failUnregister bool
	stuck                        bool // Unregister fails and leaves the callback registered
	registered                   *atomic.Int64
}

func (m flakyMeter) RegisterCallback(f metric.Callback, obs ...metric.Observable) (metric.Registration, error) {
	if m.registered.Add(1) > 1 && m.failRegister {
		return nil, errRegister
	}
	r, err := m.Meter.RegisterCallback(f, obs...)
	switch {
	case err == nil && m.stuck:
		return stuckRegistration{r}, nil
	case err != nil || !m.failUnregister:
		return r, err
	}
	return flakyRegistration{r}, nil
}

// stuckRegistration fails to unregister, and its callback stays
// registered.
type stuckRegistration struct{ metric.Registration }

func (stuckRegistration) Unregister() error { return errUnregister }

type flakyRegistration struct{ metric.Registration }

func (r flakyRegistration) Unregister() error {
	_ = r.Registration.Unregister()
	return errUnregister
}

type flakyProvider struct {
	metric.MeterProvider
	m flakyMeter
}

func (p flakyProvider) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	m := p.m
	m.Meter = p.MeterProvider.Meter(name, opts...)
	return m
}

// addGuard registers a guard of kind with one value, collects once (which
// sees it) and waits for its instrument.
func addGuard(t *testing.T, reg *telemetry.Registry, m *resilienceotel.Metrics, reader *sdkmetric.ManualReader, kind telemetry.Kind) {
	t.Helper()
	if err := reg.Register(exporttest.FakeGuard{S: telemetry.Snapshot{Kind: kind, Name: "g", Values: []telemetry.Value{{Name: "depth", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	collect(t, reader)
	m.WaitValues(t)
}

// TestRegisterErrors: a failure to register the callback for values first
// seen in a collection, or to unregister the callback it replaces, goes
// to OpenTelemetry's error handler, named by the package; a later
// collection that sees values without an instrument tries again.
func TestRegisterErrors(t *testing.T) {
	for _, c := range []struct {
		name             string
		meter            flakyMeter
		want             error
		errsAfterTwoAdds int
	}{
		{"register", flakyMeter{failRegister: true}, errRegister, 2},
		{"unregister", flakyMeter{failUnregister: true}, errUnregister, 2},
	} {
		seen := errorsSeen(t)
		reader := sdkmetric.NewManualReader()
		sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		c.meter.registered = new(atomic.Int64)
		reg := telemetry.NewRegistry()
		m, err := resilienceotel.New(flakyProvider{sdk, c.meter}, resilienceotel.WithRegistry(reg))
		if err != nil {
			t.Fatal(err)
		}
		addGuard(t, reg, m, reader, "first")
		addGuard(t, reg, m, reader, "second")
		errs := seen()
		if len(errs) != c.errsAfterTwoAdds {
			t.Errorf("%s: %d errors handled (%v), want %d", c.name, len(errs), errs, c.errsAfterTwoAdds)
		}
		for _, err := range errs {
			if !errors.Is(err, c.want) || !strings.HasPrefix(err.Error(), "resilienceotel: ") {
				t.Errorf("%s: error handled %v, want one from resilienceotel wrapping %v", c.name, err, c.want)
			}
		}
		_ = sdk.Shutdown(context.Background())
	}
}

// TestStuckCallbackReportsNothing: when the callback a new one replaces
// fails to unregister and stays registered, collections still report each
// count once: the callback replaced reports nothing any more.
func TestStuckCallbackReportsNothing(t *testing.T) {
	seen := errorsSeen(t)
	reader := sdkmetric.NewManualReader()
	sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = sdk.Shutdown(context.Background()) }()
	reg := telemetry.NewRegistry()
	m, err := resilienceotel.New(flakyProvider{sdk, flakyMeter{stuck: true, registered: new(atomic.Int64)}}, resilienceotel.WithRegistry(reg))
	if err != nil {
		t.Fatal(err)
	}
	m.Observe(telemetry.Event{Type: breaker.EventOpened, Name: "b"})
	addGuard(t, reg, m, reader, "first")
	if errs := seen(); len(errs) != 1 || !errors.Is(errs[0], errUnregister) {
		t.Errorf("errors handled: %v, want the one of Unregister", errs)
	}
	for range 2 {
		got := collect(t, reader)
		assertData(t, got, "resilience.events", counter(pt[int64](1, ptype("breaker"), pname("b"), event(breaker.EventOpened))))
		assertData(t, got, "resilience.first.depth", fgauge(pt(1.0, pname("g"))))
	}
}
