package resilienceotel_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/resilienceotel/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// The tests of this file hold the making of the instruments of guards'
// values first seen by a collection (which runs on a goroutine of its own)
// at one step, and collect, register guards or Close meanwhile. They run
// in a testing/synctest bubble: synctest.Wait lets every other goroutine
// run until it is blocked (the held step, Close waiting for the making),
// so the order of the steps is the test's, not the schedule's. A making
// that never ends but spins is not blocked, and would hang a bubble: the
// file's name sorts it after generic_test.go, whose TestGuardOfOwnKind
// fails such a making within a bound of real time first.

// hold is a step of heldMeter that, once armed, blocks the first call that
// reaches it until released.
type hold struct {
	mu      sync.Mutex
	armed   bool
	release chan struct{}
}

// arm makes the next call that reaches h block until release.
func (h *hold) arm() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed, h.release = true, make(chan struct{})
}

// reach blocks if h is armed, once.
func (h *hold) reach() {
	h.mu.Lock()
	armed, release := h.armed, h.release
	h.armed = false
	h.mu.Unlock()
	if armed {
		<-release
	}
}

// heldMeter is an SDK meter with four steps that may be held: the making
// of a float64 gauge (a guard's value's instrument), the return of
// RegisterCallback once the callback is registered, and the start and the
// return of a registration's Unregister. It counts the registrations not
// yet unregistered.
type heldMeter struct {
	metric.Meter
	gauge, registered        *hold
	unregister, unregistered *hold
	n                        *liveCount
}

type liveCount struct {
	mu sync.Mutex
	n  int
}

func (c *liveCount) add(d int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += d
}

func (c *liveCount) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (m heldMeter) Float64ObservableGauge(name string, o ...metric.Float64ObservableGaugeOption) (metric.Float64ObservableGauge, error) {
	m.gauge.reach()
	return m.Meter.Float64ObservableGauge(name, o...)
}

func (m heldMeter) RegisterCallback(f metric.Callback, obs ...metric.Observable) (metric.Registration, error) {
	r, err := m.Meter.RegisterCallback(f, obs...)
	if err != nil {
		return r, err
	}
	m.n.add(1)
	m.registered.reach()
	return &countedRegistration{Registration: r, n: m.n, h: m.unregister, after: m.unregistered}, nil
}

// countedRegistration counts its first Unregister, which reaches the hold
// h first and the hold after once unregistered.
type countedRegistration struct {
	metric.Registration
	once     sync.Once
	n        *liveCount
	h, after *hold
}

func (r *countedRegistration) Unregister() error {
	r.h.reach()
	r.once.Do(func() { r.n.add(-1) })
	err := r.Registration.Unregister()
	r.after.reach()
	return err
}

type heldProvider struct {
	metric.MeterProvider
	m heldMeter
}

func (p heldProvider) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	m := p.m
	m.Meter = p.MeterProvider.Meter(name, opts...)
	return m
}

// heldSetup is a Metrics with a registry, on an SDK provider whose meter
// steps may be held.
type heldSetup struct {
	m      *resilienceotel.Metrics
	reg    *telemetry.Registry
	reader *sdkmetric.ManualReader
	meter  heldMeter
}

func newHeld(t *testing.T) heldSetup {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
	meter := heldMeter{gauge: new(hold), registered: new(hold), unregister: new(hold), unregistered: new(hold), n: new(liveCount)}
	reg := telemetry.NewRegistry()
	m, err := resilienceotel.New(heldProvider{sdk, meter}, resilienceotel.WithRegistry(reg))
	if err != nil {
		t.Fatal(err)
	}
	return heldSetup{m: m, reg: reg, reader: reader, meter: meter}
}

// addGuardOf registers a guard of kind named "g" with the value depth.
func (s heldSetup) addGuardOf(t *testing.T, kind telemetry.Kind, depth float64) {
	t.Helper()
	if err := s.reg.Register(exporttest.FakeGuard{S: telemetry.Snapshot{Kind: kind, Name: "g", Values: []telemetry.Value{{Name: "depth", Value: depth}}}}); err != nil {
		t.Fatal(err)
	}
}

// A guard registered while the instruments of another's values are being
// made (first seen by an earlier collection) is seen by a collection
// meanwhile, and both guards' values are reported once the making has
// ended: one making at a time takes up what collections saw.
func TestGuardSeenWhileInstrumentsAreMade(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newHeld(t)
		s.addGuardOf(t, "first", 1)
		s.meter.gauge.arm()
		collect(t, s.reader) // sees first's value: its making starts, and holds
		synctest.Wait()
		s.addGuardOf(t, "second", 2)
		collect(t, s.reader) // sees second's value while the making is held
		synctest.Wait()
		close(s.meter.gauge.release)
		s.m.WaitValues(t)
		got := collect(t, s.reader)
		assertData(t, got, "resilience.first.depth", fgauge(pt(1.0, pname("g"))))
		assertData(t, got, "resilience.second.depth", fgauge(pt(2.0, pname("g"))))
		if err := closeMetrics(t, s.m); err != nil {
			t.Fatal(err)
		}
	})
}

// Close waits for a making of instruments under way, and the callback that
// making registers is unregistered too: after Close, collections report
// nothing and no registration of the Metrics is left.
func TestCloseWhileInstrumentsAreMade(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newHeld(t)
		s.m.Observe(telemetry.Event{Type: breaker.EventOpened, Name: "b"})
		s.addGuardOf(t, "mine", 1)
		s.meter.gauge.arm()
		collect(t, s.reader) // sees the value: its making starts, and holds
		synctest.Wait()
		closed := make(chan error, 1)
		go func() { closed <- s.m.Close() }()
		synctest.Wait()
		select {
		case err := <-closed:
			t.Fatalf("Close returned (%v) while the making of instruments was under way", err)
		default:
		}
		close(s.meter.gauge.release)
		synctest.Wait()
		select {
		case err := <-closed:
			if err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatal("Close did not return once the making of instruments had ended")
		}
		if got := collect(t, s.reader); len(got) != 0 {
			t.Errorf("after Close, the collection has %v; want nothing", names(got))
		}
		if n := s.meter.n.get(); n != 0 {
			t.Errorf("after Close, %d callbacks of the Metrics are still registered, want 0", n)
		}
	})
}

// Collections while the callback for newly seen values has been
// registered but has not yet taken over report each count once: only one
// of the two callbacks reports; and so does one after the old callback is
// unregistered and before the new one is current, when only the new one
// runs.
func TestCollectionWhileCallbackTakesOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newHeld(t)
		s.m.Observe(telemetry.Event{Type: breaker.EventOpened, Name: "b"})
		s.addGuardOf(t, "mine", 1)
		s.meter.registered.arm()
		collect(t, s.reader) // sees the value: its callback is registered, and holds
		synctest.Wait()
		for i := range 2 {
			t.Logf("collection %d with both callbacks registered", i+1)
			assertData(t, collect(t, s.reader), "resilience.events",
				counter(pt[int64](1, ptype("breaker"), pname("b"), event(breaker.EventOpened))))
		}
		s.meter.unregistered.arm()
		close(s.meter.registered.release)
		synctest.Wait() // the old callback is unregistered; the making holds before the new one takes over
		t.Log("collection with the old callback unregistered, the new one not current yet")
		assertData(t, collect(t, s.reader), "resilience.events",
			counter(pt[int64](1, ptype("breaker"), pname("b"), event(breaker.EventOpened))))
		close(s.meter.unregistered.release)
		s.m.WaitValues(t)
		got := collect(t, s.reader)
		assertData(t, got, "resilience.events",
			counter(pt[int64](1, ptype("breaker"), pname("b"), event(breaker.EventOpened))))
		assertData(t, got, "resilience.mine.depth", fgauge(pt(1.0, pname("g"))))
		if err := closeMetrics(t, s.m); err != nil {
			t.Fatal(err)
		}
	})
}

// blockingGuard is a guard whose Snapshot reaches the hold h first: a
// collection that reads it is held there.
type blockingGuard struct{ h *hold }

func (g blockingGuard) Name() string { return "blocking" }

func (g blockingGuard) Snapshot() telemetry.Snapshot {
	g.h.reach()
	return telemetry.Snapshot{Kind: "blocking", Name: "blocking"}
}

// A collection under way when the callback for newly seen values takes
// over (the old callback has reported the counts and is reading the
// guards' snapshots) still reports each count once: the new callback does
// not report them again in the same collection.
func TestCollectionUnderWayWhenCallbackTakesOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newHeld(t)
		s.m.Observe(telemetry.Event{Type: breaker.EventOpened, Name: "b"})
		blocking := new(hold)
		if err := s.reg.Register(blockingGuard{blocking}); err != nil {
			t.Fatal(err)
		}
		s.addGuardOf(t, "mine", 1)
		s.meter.registered.arm()
		collect(t, s.reader) // sees the value: its callback is registered, and holds
		synctest.Wait()
		blocking.arm()
		during := make(chan metricdata.ResourceMetrics, 1)
		go func() {
			var rm metricdata.ResourceMetrics
			if err := s.reader.Collect(context.Background(), &rm); err != nil {
				t.Errorf("Collect: %v", err)
			}
			during <- rm
		}()
		synctest.Wait() // the old callback has reported the counts, and holds in a Snapshot
		s.meter.unregister.arm()
		close(s.meter.registered.release)
		synctest.Wait() // the making goes on to unregister the old callback, and holds
		close(blocking.release)
		synctest.Wait()
		close(s.meter.unregister.release)
		got := make(map[string]metricdata.Metrics)
		select {
		case rm := <-during:
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					got[m.Name] = m
				}
			}
		case <-time.After(2 * time.Second):
			t.Fatal("the collection did not end after 2s")
		}
		assertData(t, got, "resilience.events",
			counter(pt[int64](1, ptype("breaker"), pname("b"), event(breaker.EventOpened))))
		s.m.WaitValues(t)
		got = collect(t, s.reader)
		assertData(t, got, "resilience.events",
			counter(pt[int64](1, ptype("breaker"), pname("b"), event(breaker.EventOpened))))
		assertData(t, got, "resilience.mine.depth", fgauge(pt(1.0, pname("g"))))
		if err := closeMetrics(t, s.m); err != nil {
			t.Fatal(err)
		}
	})
}
