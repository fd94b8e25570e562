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
// registers a callback for all of them in place of the last one; the value
// is reported by the collections that start once that is done.
//
// One callback at most reports in a collection. The new callback is
// registered before the old one is unregistered, and a collection between
// the two runs both: the old one, still current, reports, and the new one
// reports only if the old one has not reported since the new one last ran
// or was made (the SDK runs the callbacks of a collection one after the
// other, with none of another collection's between them). The new one
// becomes current once the old one is unregistered, when no collection
// runs it any more. A collection in that window may report nothing (one
// that runs the new callback first, or alone before it is current); none
// reports a count twice.
type guardValues struct {
	meter metric.Meter
	base  []metric.Observable // the instruments that are not the guards' values

	mu          sync.Mutex
	instr       map[string]metric.Float64Observable // by metric name, those of the current callback
	pending     map[string]pendingValue             // seen in a collection, without an instrument
	gen         uint64                              // the current callback's; an older one observes nothing
	next        uint64                              // the callback's taking over from the current one, 0 if none
	reported    bool                                // the current callback reported since next's was made or last ran
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

// observable returns the instrument of the metric name among all, the
// instruments of the callback observing; nil, and the value pending, if it
// has none.
func (g *guardValues) observable(all map[string]metric.Float64Observable, name string, kind telemetry.Kind, v *telemetry.Value) metric.Float64Observable {
	if o, ok := all[name]; ok { // all is never written once registered
		return o
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pending == nil {
		g.pending = make(map[string]pendingValue)
	}
	p := pendingValue{kind, *v}
	p.v.Value = 0
	g.pending[name] = p
	return nil
}

// reports reports whether the callback of generation gen reports in the
// collection that runs it (see guardValues).
func (g *guardValues) reports(gen uint64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case gen == g.gen:
		g.reported = g.next != 0
		return true
	case gen == g.next && g.next != 0:
		r := g.reported
		g.reported = false
		return !r
	}
	return false
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

// makeInstrument makes the instrument of a value, its unit and help made
// valid UTF-8 (see clean).
func (m *Metrics) makeInstrument(name string, p pendingValue) (metric.Float64Observable, error) {
	unit := metric.WithUnit(m.clean(p.v.Unit))
	desc := metric.WithDescription(strings.TrimSuffix(m.clean(p.v.Help), "."))
	if p.v.Type == telemetry.CounterValue {
		return m.values.meter.Float64ObservableCounter(name, unit, desc)
	}
	return m.values.meter.Float64ObservableGauge(name, unit, desc)
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
		g.next, g.reported = gen, true
		g.mu.Unlock()

		for n, p := range pending {
			if _, ok := all[n]; ok {
				continue
			}
			o, err := m.makeInstrument(n, p)
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
			g.discovering, g.next = false, 0
			g.mu.Unlock()
			return
		}
		g.mu.Lock()
		old := m.registration
		if g.closed {
			old = reg
		} else {
			m.registration = reg
		}
		g.mu.Unlock()
		if err := old.Unregister(); err != nil {
			m.handle(err)
		}
		// No collection runs the old callback any more: the new one takes
		// over.
		g.mu.Lock()
		g.instr, g.gen, g.next = all, gen, 0
		g.mu.Unlock()
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
		return m.collect(ctx, o, gen, all)
	}, obs...)
}
