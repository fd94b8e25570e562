package resilienceotel_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/telemetry"
)

// TestInstruments: every instrument has the name and unit the package
// documentation's table gives, and the gauges exist only with a registry.
func TestInstruments(t *testing.T) {
	events := map[string]string{
		"resilience.calls":              "{call}",
		"resilience.events":             "{event}",
		"resilience.call.duration":      "s",
		"resilience.attempt.duration":   "s",
		"resilience.wait.duration":      "s",
		"resilience.exporter.sanitized": "{name}",
	}
	gauges := map[string]string{
		"resilience.guard.refused":                 "{call}",
		"resilience.guard.state":                   "1",
		"resilience.exporter.dropped":              "{series}",
		"resilience.breaker.forced":                "1",
		"resilience.breaker.open_for":              "s",
		"resilience.breaker.cooldown_left":         "s",
		"resilience.breaker.generation":            "{generation}",
		"resilience.breaker.window_calls":          "{call}",
		"resilience.breaker.window_successes":      "{call}",
		"resilience.breaker.window_failures":       "{call}",
		"resilience.breaker.window_slow":           "{call}",
		"resilience.breaker.window_refused":        "{call}",
		"resilience.breaker.failure_ratio":         "1",
		"resilience.breaker.consecutive_successes": "{call}",
		"resilience.breaker.consecutive_failures":  "{call}",
		"resilience.bulkhead.limit":                "{call}",
		"resilience.bulkhead.in_flight":            "{call}",
		"resilience.bulkhead.queued":               "{call}",
		"resilience.ratelimit.rate":                "{token}/s",
		"resilience.ratelimit.burst":               "{token}",
		"resilience.ratelimit.tokens":              "{token}",
	}
	run := func(t *testing.T, opts ...resilienceotel.Option) map[string]string {
		m, reader := newMetrics(t, append(opts, resilienceotel.WithClock(clock.NewFake()))...)
		for _, e := range allTypes {
			e.Name = "x"
			m.Observe(e)
		}
		l := resilienceotel.Measure[int](m, "x", 1)
		_, _ = l.Call.Then(l.Attempt).Do(context.Background(), func(context.Context) (int, error) { return 1, nil })
		units := make(map[string]string)
		for name, m := range collect(t, reader) {
			units[name] = m.Unit
			if m.Description == "" {
				t.Errorf("%s has no description", name)
			}
		}
		return units
	}
	t.Run("registry", func(t *testing.T) {
		reg := telemetry.NewRegistry()
		for _, g := range []telemetry.Guard{
			breaker.New(breaker.WithName("b")),
			bulkhead.New(1, bulkhead.WithName("h")),
			ratelimit.New(1, 1, ratelimit.WithName("l")),
		} {
			if err := reg.Register(g); err != nil {
				t.Fatal(err)
			}
		}
		want := make(map[string]string)
		for _, tab := range []map[string]string{events, gauges} {
			for k, v := range tab {
				want[k] = v
			}
		}
		if diff := cmp.Diff(want, run(t, resilienceotel.WithRegistry(reg))); diff != "" {
			t.Errorf("instruments mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("none", func(t *testing.T) {
		if diff := cmp.Diff(events, run(t)); diff != "" {
			t.Errorf("instruments mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestGlobalProvider: New(otel.GetMeterProvider()) reports to the global
// provider.
func TestGlobalProvider(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	prev := otel.GetMeterProvider()
	otel.SetMeterProvider(mp)
	defer otel.SetMeterProvider(prev)
	m, err := resilienceotel.New(otel.GetMeterProvider())
	if err != nil {
		t.Fatal(err)
	}
	m.Observe(telemetry.Event{Type: breaker.EventOpened, Name: "b"})
	assertData(t, collect(t, reader), "resilience.events", counter(pt[int64](1, ptype("breaker"), pname("b"), event(breaker.EventOpened))))
}

// TestClose: after Close, collections report neither counts nor gauges.
func TestClose(t *testing.T) {
	reg := telemetry.NewRegistry()
	if err := reg.Register(breaker.New(breaker.WithName("b"))); err != nil {
		t.Fatal(err)
	}
	m, reader := newMetrics(t, resilienceotel.WithRegistry(reg))
	m.Observe(telemetry.Event{Type: breaker.EventOpened, Name: "b"})
	if got := collect(t, reader); len(got) == 0 {
		t.Fatal("nothing collected before Close")
	}
	if err := closeMetrics(t, m); err != nil {
		t.Fatal(err)
	}
	m.Observe(telemetry.Event{Type: breaker.EventOpened, Name: "b"})
	for name, d := range collect(t, reader) {
		t.Errorf("after Close: %s collected: %+v", name, d.Data)
	}
}

// TestOptionPanics: invalid options panic, naming the option and value.
func TestOptionPanics(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"provider", func() { _, _ = resilienceotel.New(nil) }, "resilienceotel: New(nil, ...): the MeterProvider must not be nil; pass otel.GetMeterProvider() for the global one"},
		{"nil option", func() { _, _ = resilienceotel.New(otel.GetMeterProvider(), nil) }, "resilienceotel: New option must not be nil"},
		{"registry", func() { resilienceotel.WithRegistry(nil) }, "resilienceotel: WithRegistry registry must not be nil"},
		{"keys", func() { resilienceotel.WithKeys(0) }, "resilienceotel: WithKeys max must be >= 1, got 0"},
		{"clock", func() { resilienceotel.WithClock(nil) }, "resilienceotel: WithClock(nil): the clock must not be nil; leave the option out for clock.Real()"},
	} {
		t.Run(c.name, func(t *testing.T) { expectPanic(t, c.want, c.f) })
	}
}

// TestConcurrent observes, measures and collects from many goroutines at
// once (for the race detector), then checks that no count was lost.
func TestConcurrent(t *testing.T) {
	reg := telemetry.NewRegistry()
	b := breaker.New(breaker.WithName("b"))
	if err := reg.Register(b); err != nil {
		t.Fatal(err)
	}
	m, reader := newMetrics(t, resilienceotel.WithRegistry(reg), resilienceotel.WithKeys(4))
	l := resilienceotel.Measure[int](m, "p", 3)
	p := l.Call.Then(breaker.Policy[int](b), l.Attempt)
	const goroutines, each = 8, 200
	var wg sync.WaitGroup
	done := make(chan struct{})
	go func() { // collections while the counts grow
		for {
			select {
			case <-done:
				return
			default:
				var rm metricdata.ResourceMetrics
				if err := reader.Collect(context.Background(), &rm); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				m.Observe(telemetry.Event{Type: ratelimit.EventWaited, Name: "api", Key: string(rune('a' + (g+i)%8)), Wait: time.Millisecond})
				_, _ = p.Do(context.Background(), func(context.Context) (int, error) { return i, nil })
			}
		})
	}
	wg.Wait()
	close(done)
	got := collect(t, reader)
	var events int64
	keys := make(map[string]bool)
	for _, p := range got["resilience.events"].Data.(metricdata.Sum[int64]).DataPoints {
		events += p.Value
		k, _ := p.Attributes.Value("resilience.key")
		keys[k.AsString()] = true
	}
	if events != goroutines*each {
		t.Errorf("events counted %d, want %d", events, goroutines*each)
	}
	if len(keys) != 5 { // the first four keys and _OTHER
		t.Errorf("keys %v, want 4 and _OTHER", keys)
	}
	assertData(t, got, "resilience.calls", counter(pt[int64](goroutines*each, ptype("pipeline"), pname("p"), outcome("success"))))
}
