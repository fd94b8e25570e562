package resilienceotel

import (
	"context"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/metric"

	"github.com/f0b5b96b/resilience/telemetry"
)

// guardValues are the instruments of the registered guards' values, one
// per metric name (see valueMetric), made from what each value says of
// itself. An instrument must be listed when the callback that observes
// it is registered, and the SDK runs callbacks under a lock that making
// instruments and registering callbacks take too: so a value first seen
// in a collection gets its instrument from a goroutine (discover), which
// registers a callback for all of them in place of the last one, and is
// reported from the next collection on.
type guardValues struct {
	meter metric.Meter
	base  []metric.Observable // the instruments that are not the guards' values

	mu          sync.Mutex
	instr       map[string]metric.Float64Observable // by metric name, those of the current callback
	pending     map[string]pendingValue             // seen in a collection, without an instrument
	gen         uint64                              // the current callback's; an older one observes nothing
	closed      bool
	discovering bool
	done        sync.WaitGroup // the discovering goroutine
}

type pendingValue struct {
	kind telemetry.Kind
	v    telemetry.Value // Value unset
}

// valueMetric returns the instrument name of v, a value of a guard of
// kind: resilience.<kind>.<name>, with characters an instrument name may
// not hold (other than ASCII letters, digits, '_', '.', '-' and '/') as
// underscores.
func valueMetric(kind telemetry.Kind, name string) string {
	return "resilience." + sanitize(string(kind)) + "." + sanitize(name)
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == '.' || r == '/' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

// observable returns the instrument of the metric name in the callback of
// generation gen, and whether that callback is the current one.
func (g *guardValues) observable(gen uint64, name string, kind telemetry.Kind, v *telemetry.Value) (metric.Float64Observable, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gen != g.gen {
		return nil, false
	}
	if o, ok := g.instr[name]; ok {
		return o, true
	}
	if g.pending == nil {
		g.pending = make(map[string]pendingValue)
	}
	p := pendingValue{kind, *v}
	p.v.Value = 0
	g.pending[name] = p
	return nil, true
}

// current reports whether gen is the current callback's generation.
func (g *guardValues) current(gen uint64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return gen == g.gen
}

// kick starts discover if values are pending and it is not running.
func (g *guardValues) kick(m *Metrics) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.pending) == 0 || g.discovering || g.closed {
		return
	}
	g.discovering = true
	g.done.Add(1)
	go func() {
		defer g.done.Done()
		m.discover()
	}()
}

// makeInstrument makes the instrument of a value.
func (g *guardValues) makeInstrument(name string, p pendingValue) (metric.Float64Observable, error) {
	unit := metric.WithUnit(p.v.Unit)
	desc := metric.WithDescription(strings.TrimSuffix(p.v.Help, "."))
	if p.v.Type == telemetry.CounterValue {
		return g.meter.Float64ObservableCounter(name, unit, desc)
	}
	return g.meter.Float64ObservableGauge(name, unit, desc)
}

// discover makes the instruments of the pending values and registers a
// callback that observes them all, in place of the current one. It runs
// until no value is pending (or the Metrics is closed).
func (m *Metrics) discover() {
	g := &m.values
	for {
		g.mu.Lock()
		pending := g.pending
		g.pending = nil
		if len(pending) == 0 || g.closed {
			g.discovering = false
			g.mu.Unlock()
			return
		}
		all := make(map[string]metric.Float64Observable, len(g.instr)+len(pending))
		for n, o := range g.instr {
			all[n] = o
		}
		gen := g.gen + 1
		g.mu.Unlock()

		for n, p := range pending {
			if _, ok := all[n]; ok {
				continue
			}
			o, err := g.makeInstrument(n, p)
			if err != nil {
				m.handle(err)
				continue
			}
			all[n] = o
		}
		reg, err := m.register(gen, all)
		if err != nil {
			m.handle(err)
			g.mu.Lock()
			g.discovering = false
			g.mu.Unlock()
			return
		}
		g.mu.Lock()
		old := m.registration
		if g.closed {
			old = reg
		} else {
			g.instr, g.gen, m.registration = all, gen, reg
		}
		g.mu.Unlock()
		if err := old.Unregister(); err != nil {
			m.handle(err)
		}
	}
}

// register registers the callback of generation gen, observing the
// instruments of base and the guards' values of all.
func (m *Metrics) register(gen uint64, all map[string]metric.Float64Observable) (metric.Registration, error) {
	obs := append([]metric.Observable(nil), m.values.base...)
	for _, o := range all {
		obs = append(obs, o)
	}
	return m.values.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		return m.collect(ctx, o, gen)
	}, obs...)
}
