package resilienceotel

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/resilienceotel/internal/export"
	"github.com/f0b5b96b/resilience/telemetry"
)

// ScopeName is the instrumentation scope of the meter the instruments are
// made from.
const ScopeName = "github.com/f0b5b96b/resilience/resilienceotel"

// The attribute keys (see the package documentation's table).
const (
	attrPolicyType = attribute.Key("resilience.policy.type")
	attrPolicyName = attribute.Key("resilience.policy.name")
	attrOutcome    = attribute.Key("resilience.outcome")
	attrEvent      = attribute.Key("event.name")
	attrErrorType  = attribute.Key("error.type")
	attrAttempt    = attribute.Key("resilience.attempt")
	attrKey        = attribute.Key("resilience.key")
	attrState      = attribute.Key("resilience.guard.state")
)

// durationBuckets are the histograms' bucket bounds in seconds (those of
// OpenTelemetry's HTTP duration conventions): the SDK's default bounds are
// for milliseconds.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// Metrics reports what the policies do as OpenTelemetry metrics: it is the
// [telemetry.Observer] to give to the policies' WithObserver options (it
// counts their events), the source of the [Measure] layers that time calls
// and attempts, and it reads the snapshots of the guards of a
// [telemetry.Registry] at each collection (WithRegistry). See the package
// documentation for the instruments and their attributes.
//
// Observing an event does no OpenTelemetry work but for the waits that
// resilience.wait.duration records: it counts the event under its
// attributes (one map read and one atomic add for a series seen before, no
// allocation) and the counts are reported at collection. A Metrics is safe
// for simultaneous use by multiple goroutines.
type Metrics struct {
	clock clock.Clock
	keys  bound[policyID] // nil max (0): no resilience.key
	errs  bound[struct{}]

	calls, events, refused metric.Int64ObservableCounter
	sanitizedCount         metric.Int64ObservableCounter
	sanitized              countCell // names and keys clean replaced
	droppedCount           metric.Int64ObservableCounter
	dropped                countCell // guards' series left out (see admit)
	callDur, attemptDur    metric.Float64Histogram
	waitDur                metric.Float64Histogram
	state                  metric.Int64ObservableGauge
	registration           metric.Registration // under values.mu
	registry               *telemetry.Registry
	values                 guardValues

	eventSeries   series[eventKey, eventSeries]
	callSeries    series[callKey, callSeries]
	attemptSeries series[attemptKey, attemptSeries]
}

type policyID struct {
	kind telemetry.Kind
	name string
}

type eventKey struct {
	typ             telemetry.Type
	name, key, errT string
}

type eventSeries struct {
	n      countCell
	events metric.ObserveOption  // resilience.events' attributes
	calls  metric.ObserveOption  // resilience.calls', nil if the event is not an outcome
	wait   []metric.RecordOption // resilience.wait.duration's, nil if it has no wait
}

// New returns a Metrics with its instruments made from the meter of
// ScopeName of mp (otel.GetMeterProvider() for the global one) and its
// callback registered with that meter: the MeterProvider is positional
// because every Metrics needs one (what is optional is an option), as
// resilienceprom.New takes the prometheus.Registerer its Collector
// registers with. It returns an error, and no Metrics, if mp fails to make
// an instrument or to register the callback. New panics if mp or an option
// is nil; invalid options panic in the option.
func New(mp metric.MeterProvider, opts ...Option) (*Metrics, error) {
	if mp == nil {
		panic("resilienceotel: New(nil, ...): the MeterProvider must not be nil; pass otel.GetMeterProvider() for the global one")
	}
	c := config{provider: mp}
	for _, o := range opts {
		if o == nil {
			panic("resilienceotel: New option must not be nil")
		}
		o.apply(&c)
	}
	if c.clock == nil {
		c.clock = clock.Real()
	}
	m := &Metrics{clock: c.clock, registry: c.registry}
	m.keys.max = c.keys
	m.errs.max = maxErrorTypes
	meter := c.provider.Meter(ScopeName)

	var errs []error
	add := func(err error) { errs = append(errs, err) }
	var err error
	m.calls, err = meter.Int64ObservableCounter("resilience.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Calls through a policy, by outcome: success, failure, rejected (a guard refused it) or ignored"))
	add(err)
	m.events, err = meter.Int64ObservableCounter("resilience.events", metric.WithUnit("{event}"),
		metric.WithDescription("Events the policies reported, by event.name (package telemetry's table)"))
	add(err)
	m.callDur, err = meter.Float64Histogram("resilience.call.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of calls through a Measure layer, retries and waits included"),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	add(err)
	m.attemptDur, err = meter.Float64Histogram("resilience.attempt.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of each attempt of a call, by attempt number"),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	add(err)
	m.waitDur, err = meter.Float64Histogram("resilience.wait.duration", metric.WithUnit("s"),
		metric.WithDescription("Waits the policies reported: a retry's backoff, time in a bulkhead's queue, for a rate limiter's token"),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	add(err)
	m.sanitizedCount, err = meter.Int64ObservableCounter("resilience.exporter.sanitized", metric.WithUnit("{name}"),
		metric.WithDescription("Names, keys, guards' kinds and events' types that were not valid UTF-8, reported with their invalid bytes replaced by U+FFFD: one per event, and per guard snapshot read at a collection; and values' units and helps, one per instrument made"))
	add(err)
	observables := []metric.Observable{m.calls, m.events, m.sanitizedCount}
	if c.registry != nil {
		m.refused, err = meter.Int64ObservableCounter("resilience.guard.refused", metric.WithUnit("{call}"),
			metric.WithDescription("Calls a registered guard has refused since it was made, from its snapshot"))
		add(err)
		m.state, err = meter.Int64ObservableGauge("resilience.guard.state", metric.WithUnit("1"),
			metric.WithDescription("1, with the state of a registered guard that has states (a breaker: closed, open, half-open) as an attribute, from its snapshot"))
		add(err)
		m.droppedCount, err = meter.Int64ObservableCounter("resilience.exporter.dropped", metric.WithUnit("{series}"),
			metric.WithDescription("Series of registered guards left out, one per series per collection: a series another guard sent in the collection already (guards of one name whose kinds give one instrument name, or one attribute value), or a value named like one of the exporter's own instruments"))
		add(err)
		observables = append(observables, m.refused, m.state, m.droppedCount)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("resilienceotel: %w", err)
	}
	m.values.meter, m.values.base = meter, observables
	// The instruments of the values of the guards registered now; those
	// of guards registered later are made when a collection first sees
	// them (see guardValues).
	all := make(map[string]metric.Float64Observable)
	if c.registry != nil {
		for _, s := range c.registry.Snapshots() {
			for _, v := range s.Values {
				name := valueMetric(s.Kind, v.Name)
				if _, ok := all[name]; ok || ownInstruments[strings.ToLower(name)] {
					continue
				}
				o, err := m.makeInstrument(name, pendingValue{s.Kind, v})
				if err != nil {
					return nil, fmt.Errorf("resilienceotel: %w", err)
				}
				all[name] = o
			}
		}
	}
	m.values.instr = all
	m.registration, err = m.register(0, all)
	if err != nil {
		return nil, fmt.Errorf("resilienceotel: %w", err)
	}
	if c.registry != nil {
		c.registry.AddObserver(m)
	}
	return m, nil
}

// Close removes m from the observers of its registry (WithRegistry) and
// unregisters the callback that reports the counts and the gauges:
// collections after it report none of them (the histograms stay). Events
// observed after Close are counted, and not reported. Close waits for the
// making of the instruments of guards' values first seen by a collection,
// if one is under way; it must not be called from a callback of the
// MeterProvider. On a zero Metrics (not made by New) Close does nothing;
// its other methods, and Measure given it, panic.
func (m *Metrics) Close() error {
	if m.values.meter == nil { // a zero Metrics: nothing to close
		return nil
	}
	m.values.mu.Lock()
	m.values.closed = true
	reg := m.registration
	m.values.mu.Unlock()
	if m.registry != nil {
		m.registry.RemoveObserver(m)
	}
	err := reg.Unregister()
	m.values.done.Wait()
	return err
}

// handle reports an error of the making of an instrument or the
// registration of a callback outside New to OpenTelemetry's error handler.
func (m *Metrics) handle(err error) { otel.Handle(fmt.Errorf("resilienceotel: %w", err)) }

// Observe counts e under its type, policy, name, error type and (with
// WithKeys) key; an event that is a call's outcome (see the package
// documentation) counts in resilience.calls too, and an event with a wait
// records it in resilience.wait.duration. A duration event (a "kind.call"
// or "kind.attempt" type, such as retry.call and retry.attempt: see
// telemetry.WhatCall) records its Elapsed as a call through a [Measure]
// layer named e.Name does (resilience.calls with resilience.policy.type
// "pipeline", and resilience.call.duration) or as an attempt does
// (resilience.attempt.duration, resilience.attempt e.Attempt, at most
// 10), with its outcome read from its Err: success, ignored
// (context.Canceled), rejected (resilience.ErrRefused) or failure.
//
// With WithRegistry, the Metrics is added to the registry's observers
// (telemetry.Registry.AddObserver) until Close: the events of the
// policies given the registry as their observer reach it; give it to no
// policy as well, or their events count twice.
func (m *Metrics) Observe(e telemetry.Event) {
	if m.values.meter == nil {
		panic("resilienceotel: Metrics.Observe on a zero Metrics: create one with New")
	}
	k := eventKey{typ: telemetry.Type(m.clean(string(e.Type))), name: m.clean(e.Name)}
	if m.keys.max > 0 && e.Key != "" {
		k.key = m.keys.of(policyID{k.typ.Kind(), k.name}, m.clean(e.Key))
	}
	if e.Err != nil {
		k.errT = m.errs.of(struct{}{}, export.ErrorType(e.Err))
	}
	s := m.eventSeries.Get(k, newEventSeries)
	s.n.add()
	if s.wait != nil && recordsWait(e) {
		m.waitDur.Record(context.Background(), e.Wait.Seconds(), s.wait...)
	}
	switch export.DurationOf(e) {
	case export.CallDuration:
		ms := measure{m: m, name: k.name}
		ms.Call(context.Background(), export.OutcomeOfErr(e.Err), e.Elapsed, e.Err)
	case export.AttemptDuration:
		ms := measure{m: m, name: k.name}
		ms.Attempt(context.Background(), export.EventAttempt(e), export.OutcomeOfErr(e.Err), e.Elapsed, e.Err)
	}
}

func newEventSeries(k eventKey) *eventSeries {
	kind := k.typ.Kind()
	base := []attribute.KeyValue{attrPolicyType.String(string(kind)), attrPolicyName.String(k.name)}
	if k.key != "" {
		base = append(base, attrKey.String(k.key))
	}
	s := new(eventSeries)
	withErr := base
	if k.errT != "" {
		withErr = append(withErr[:len(withErr):len(withErr)], attrErrorType.String(k.errT))
	}
	s.events = metric.WithAttributeSet(attribute.NewSet(append(withErr[:len(withErr):len(withErr)], attrEvent.String(string(k.typ)))...))
	if o, ok := eventOutcomes[k.typ]; ok {
		s.calls = metric.WithAttributeSet(attribute.NewSet(append(withErr[:len(withErr):len(withErr)], attrOutcome.String(o))...))
	}
	if waitEvents[k.typ] {
		s.wait = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(append(base[:len(base):len(base)], attrEvent.String(string(k.typ)))...))}
	}
	return s
}

// clean returns s as an attribute value, unit or description: s if it
// is valid UTF-8, else s with its invalid bytes replaced by U+FFFD,
// counted in resilience.exporter.sanitized. OTLP sends these as protobuf
// strings, which must be valid UTF-8: one bad value would fail the export
// of every metric of the batch.
func (m *Metrics) clean(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	m.sanitized.add()
	return strings.ToValidUTF8(s, "\uFFFD")
}

// collect reports the counts and reads the registry's snapshots, if the
// callback of generation gen, observing the guards' values of all, is the
// one that reports in this collection (see guardValues).
func (m *Metrics) collect(_ context.Context, o metric.Observer, gen uint64, all map[string]metric.Float64Observable) error {
	if !m.values.reports(gen) {
		return nil
	}
	m.eventSeries.Each(func(_ eventKey, s *eventSeries) {
		n := s.n.load()
		o.ObserveInt64(m.events, n, s.events)
		if s.calls != nil {
			o.ObserveInt64(m.calls, n, s.calls)
		}
	})
	m.callSeries.Each(func(_ callKey, s *callSeries) {
		o.ObserveInt64(m.calls, s.n.load(), s.obs)
	})
	defer func() { o.ObserveInt64(m.sanitizedCount, m.sanitized.load()) }()
	if m.registry == nil {
		return nil
	}
	defer m.values.kick(m)
	defer func() { o.ObserveInt64(m.droppedCount, m.dropped.load()) }()
	var sent sentSeries
	for _, snap := range m.registry.Snapshots() {
		n, k := m.clean(snap.Name), m.clean(string(snap.Kind))
		name, kind := attrPolicyName.String(n), attrPolicyType.String(k)
		if m.admit(&sent, seriesID{instrument: "resilience.guard.refused", kind: k, name: n}) {
			o.ObserveInt64(m.refused, int64(snap.Refused), metric.WithAttributes(kind, name))
		}
		if snap.State != "" && m.admit(&sent, seriesID{instrument: "resilience.guard.state", kind: k, name: n}) {
			o.ObserveInt64(m.state, 1, metric.WithAttributes(kind, name, attrState.String(m.clean(snap.State))))
		}
		attrs := metric.WithAttributes(name)
		for i := range snap.Values {
			v := &snap.Values[i]
			metricName := valueMetric(snap.Kind, v.Name)
			if !m.admit(&sent, seriesID{instrument: metricName, name: n, value: true}) {
				continue
			}
			if inst := m.values.observable(all, metricName, snap.Kind, v); inst != nil {
				o.ObserveFloat64(inst, v.Value, attrs)
			}
		}
	}
	return nil
}

// ownInstruments are the names of the Metrics' own instruments that a
// guard's value could take (resilience.<kind>.<name>), which none may.
var ownInstruments = map[string]bool{
	"resilience.call.duration": true, "resilience.attempt.duration": true, "resilience.wait.duration": true,
	"resilience.guard.refused": true, "resilience.guard.state": true,
	"resilience.exporter.sanitized": true, "resilience.exporter.dropped": true,
}

// sentSeries are the series of the guards that one collection has
// observed.
type sentSeries map[seriesID]struct{}

// seriesID is a series of a guard: its instrument's name and its
// attributes (a value's has no kind).
type seriesID struct {
	instrument, kind, name string
	value                  bool
}

// admit reports whether the guard's series id may be observed in the
// collection that has observed sent, and adds it to sent: not if it is a
// series sent before in it (guards of one name whose kinds give one
// instrument name to a value, as "my queue" and "my_queue" do, or
// "Mine" and "mine": the SDK takes instrument names that differ in case
// as one; or whose kinds read alike once valid UTF-8), nor if it is a
// guard's value named like one of the Metrics' own instruments. The
// registry's order (Snapshots) decides which guard keeps a series: the
// first, as in resilienceprom. A series left out counts in
// resilience.exporter.dropped.
func (m *Metrics) admit(sent *sentSeries, id seriesID) bool {
	id.instrument = strings.ToLower(id.instrument)
	_, dup := (*sent)[id]
	if dup || id.value && ownInstruments[id.instrument] {
		m.dropped.add()
		return false
	}
	if *sent == nil {
		*sent = make(sentSeries)
	}
	(*sent)[id] = struct{}{}
	return true
}
