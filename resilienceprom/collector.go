package resilienceprom

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/resilienceprom/internal/export"
	"github.com/f0b5b96b/resilience/resilienceprom/internal/guardopt"
	"github.com/f0b5b96b/resilience/telemetry"
)

// DefaultBuckets are the histograms' bucket bounds in seconds, without
// WithBuckets.
var DefaultBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// Option configures a [Collector] made by [New]. Options apply in order;
// when two set the same field, the last one wins.
type Option interface{ apply(*Collector) }

type option func(*Collector)

func (o option) apply(c *Collector) { o(c) }

// WithRegistry sets the registry whose guards' snapshots the gauges (and
// resilience_guard_refused_total) report at each collection, and adds the
// Collector to its observers: the policies given the registry as their
// observer reach the Collector (see [Collector.Observe]). Without it
// there are no gauges: only what the observed events and the Measure
// layers count. It panics if r is nil.
func WithRegistry(r *telemetry.Registry) Option {
	if r == nil {
		panic("resilienceprom: WithRegistry registry must not be nil")
	}
	return option(func(c *Collector) { c.registry = r })
}

// WithBuckets sets the histograms' bucket upper bounds, in seconds
// (default: DefaultBuckets). It panics unless the bounds are finite,
// increasing, and at least one.
func WithBuckets(bounds ...float64) Option {
	if len(bounds) == 0 {
		panic("resilienceprom: WithBuckets needs at least one bound")
	}
	for i, b := range bounds {
		if math.IsInf(b, 0) || math.IsNaN(b) || (i > 0 && b <= bounds[i-1]) {
			panic(fmt.Sprintf("resilienceprom: WithBuckets bounds must be finite and increasing, got %v", bounds))
		}
	}
	bounds = append([]float64(nil), bounds...)
	return option(func(c *Collector) { c.buckets = bounds })
}

// WithClock sets the clock the [Measure] layers time calls and attempts
// on. Without it, clock.Real(). It panics if clk is nil: leave the option
// out for clock.Real().
func WithClock(clk clock.Clock) Option {
	guardopt.Clock("resilienceprom", clk)
	return option(func(c *Collector) { c.clock = clk })
}

// Collector is a prometheus.Collector of what the policies do: it is the
// [telemetry.Observer] to give to the policies' WithObserver options (it
// counts their events in a telemetry.Counter), the source of the [Measure]
// layers that time calls and attempts, and it reads the snapshots of the
// guards of a [telemetry.Registry] (WithRegistry). Describe and Collect
// read these counts and snapshots when Prometheus scrapes: the calls and
// events themselves do no Prometheus work (a count is an atomic add, a
// duration one more). See the package documentation for the metrics.
//
// A Collector is safe for simultaneous use by multiple goroutines.
type Collector struct {
	registry *telemetry.Registry
	buckets  []float64
	clock    clock.Clock
	events   telemetry.Counter

	waits    series[waitKey, histogram]
	calls    series[callKey, callSeries]
	attempts series[attemptKey, histogram]

	callsDesc, eventsDesc, refusedDesc, stateDesc *prometheus.Desc
	callDurDesc, attemptDurDesc, waitDurDesc      *prometheus.Desc
	sanitizedDesc, droppedDesc                    *prometheus.Desc
	values                                        values
}

type waitKey struct {
	typ  telemetry.Type
	name string
}

// New returns a Collector registered with reg (prometheus.DefaultRegisterer
// for the default registry): the Registerer is positional because every
// Collector needs one (what is optional is an option), as
// resilienceotel.New takes the MeterProvider its Metrics reports to. It
// returns an error, and no Collector, if reg refuses the Collector (a
// *prometheus.AlreadyRegisteredError for a second registration, an error
// for a metric of the same name registered by another collector). New
// panics if reg or an option is nil; invalid options panic in the option.
// To register the Collector with more registries, call their Register
// with it. A pedantic registry (prometheus.NewPedanticRegistry) also
// checks that each metric gathered was described when the Collector was
// registered, which the values of guards added to the telemetry.Registry
// later were not: register the Collector with such a registry once the
// guards are in.
func New(reg prometheus.Registerer, opts ...Option) (*Collector, error) {
	if reg == nil {
		panic("resilienceprom: New(nil, ...): the Registerer must not be nil; pass prometheus.DefaultRegisterer for the default registry")
	}
	c := &Collector{
		buckets:        DefaultBuckets,
		clock:          clock.Real(),
		callsDesc:      prometheus.NewDesc("resilience_calls_total", "Calls through a policy, by outcome: success, failure, rejected (a guard refused it) or ignored.", []string{"policy", "name", "outcome"}, nil),
		eventsDesc:     prometheus.NewDesc("resilience_events_total", "Events the policies reported, by event (package telemetry's table).", []string{"policy", "name", "event"}, nil),
		callDurDesc:    prometheus.NewDesc("resilience_call_duration_seconds", "Duration of calls (a retry's calls, or through a Measure layer), retries and waits included.", []string{"name", "outcome"}, nil),
		attemptDurDesc: prometheus.NewDesc("resilience_attempt_duration_seconds", "Duration of each attempt of a call, by attempt number.", []string{"name", "attempt", "outcome"}, nil),
		waitDurDesc:    prometheus.NewDesc("resilience_wait_duration_seconds", "Waits the policies reported: a retry's backoff, time in a bulkhead's queue, for a rate limiter's token.", []string{"policy", "name", "event"}, nil),
		refusedDesc:    prometheus.NewDesc("resilience_guard_refused_total", "Calls a registered guard has refused since it was made, from its snapshot.", []string{"policy", "name"}, nil),
		stateDesc:      prometheus.NewDesc("resilience_guard_state", "1, with the state of a registered guard that has states (a breaker: closed, open, half-open) as its label, from its snapshot.", []string{"policy", "name", "state"}, nil),
		sanitizedDesc:  prometheus.NewDesc("resilience_exporter_sanitized_series", "Series of the last collection whose name was not valid UTF-8, sent with the invalid bytes replaced by U+FFFD.", nil, nil),
		droppedDesc:    prometheus.NewDesc("resilience_exporter_dropped_series", "Series of the last collection left out: they read as a series sent before (a name once sanitised, or a guard's value named as another kind's), a guard's value is named like one of the Collector's own metrics or from bytes that are not valid UTF-8 (its kind, name or unit), or a label is not valid UTF-8.", nil, nil),
	}
	for _, o := range opts {
		if o == nil {
			panic("resilienceprom: New option must not be nil")
		}
		o.apply(c)
	}
	if err := reg.Register(c); err != nil {
		return nil, fmt.Errorf("resilienceprom: %w", err)
	}
	if c.registry != nil {
		c.registry.AddObserver(c)
	}
	return c, nil
}

// Observe counts e under its policy name and type; an event with a wait
// (see the package documentation) records it in
// resilience_wait_duration_seconds. A duration event (a "kind.call" or
// "kind.attempt" type, such as retry.call and retry.attempt: see
// telemetry.WhatCall) records its Elapsed as a call through a [Measure]
// layer named e.Name does (resilience_calls_total{policy="pipeline"} and
// resilience_call_duration_seconds) or as an attempt does
// (resilience_attempt_duration_seconds, attempt e.Attempt, at most 10),
// with its outcome read from its Err: success, ignored (context.Canceled),
// rejected (resilience.ErrRefused) or failure.
//
// With WithRegistry, the Collector is added to the registry's observers
// (telemetry.Registry.AddObserver): the events of the policies given the
// registry as their observer reach it, and give it to no policy as well,
// or their events count twice. It stays there for the registry's life.
func (c *Collector) Observe(e telemetry.Event) {
	c.events.Observe(e)
	if recordsWait(e) {
		c.waits.Get(waitKey{e.Type, e.Name}, c.newWaitHistogram).observe(e.Wait)
	}
	switch export.DurationOf(e) {
	case export.CallDuration:
		s := c.calls.Get(callKey{e.Name, export.OutcomeOfErr(e.Err)}, c.newCallSeries)
		s.n.Add(1)
		s.dur.observe(e.Elapsed)
	case export.AttemptDuration:
		c.attempts.Get(attemptKey{e.Name, export.EventAttempt(e), export.OutcomeOfErr(e.Err)}, c.newAttemptHistogram).observe(e.Elapsed)
	}
}

func (c *Collector) newWaitHistogram(waitKey) *histogram       { return newHistogram(c.buckets) }
func (c *Collector) newAttemptHistogram(attemptKey) *histogram { return newHistogram(c.buckets) }
func (c *Collector) newCallSeries(callKey) *callSeries {
	return &callSeries{dur: newHistogram(c.buckets)}
}

// Describe sends the descriptions of the Collector's own metrics and of
// the values of the guards registered (WithRegistry) now. The values of a
// guard registered later are collected too, but a pedantic registry
// (prometheus.NewPedanticRegistry), which checks every metric against
// those described when the Collector was registered, rejects them: with
// one, register the guards first.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.callsDesc, c.eventsDesc, c.callDurDesc, c.attemptDurDesc, c.waitDurDesc, c.refusedDesc, c.stateDesc, c.sanitizedDesc, c.droppedDesc} {
		ch <- d
	}
	if c.registry == nil {
		return
	}
	sent := make(map[*prometheus.Desc]bool)
	for _, s := range c.registry.Snapshots() {
		for i := range s.Values {
			if d := c.values.desc(s.Kind, &s.Values[i]); d != nil && !sent[d] {
				sent[d] = true
				ch <- d
			}
		}
	}
}

// Collect sends the counts of the observed events and of the Measure
// layers, the histograms, and the gauges of the registered guards' snapshots
// taken now.
//
// A name is a label value, which Prometheus requires to be valid UTF-8. The
// policies' WithName options and the registry reject names that are not,
// but a guard or an event source of one's own may still report one: its
// series are sent with the invalid bytes replaced by U+FFFD
// (strings.ToValidUTF8), and counted in
// resilience_exporter_sanitized_series. A series that cannot be sent (one
// that reads, once sanitised, as a series sent before in the collection; a
// guard's value whose metric name another kind's value gives too, as kinds
// "my-cache" and "my_cache" do, or kind "a_b"'s value "c" and kind "a"'s
// value "b_c"; every series of a guard whose kind is not valid UTF-8, its
// values too; a guard's value whose name or unit is not valid UTF-8) is
// left out and counted in resilience_exporter_dropped_series: the first
// series sent stays. So no name makes a scrape fail: the other series, of this Collector and of
// the rest of the registry, are served.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	e := emitter{ch: ch}
	for _, n := range c.events.Counts() {
		kind := string(n.Type.Kind())
		name := e.name(n.Name)
		e.counter(c.eventsDesc, float64(n.N), kind, name, string(n.Type))
		if o, ok := eventOutcomes[n.Type]; ok {
			e.counter(c.callsDesc, float64(n.N), kind, name, o)
		}
	}
	c.waits.Each(func(k waitKey, h *histogram) {
		e.histogram(h, c.waitDurDesc, string(k.typ.Kind()), e.name(k.name), string(k.typ))
	})
	c.calls.Each(func(k callKey, s *callSeries) {
		name := e.name(k.name)
		e.counter(c.callsDesc, float64(s.n.Load()), export.PipelineType, name, k.outcome)
		e.histogram(s.dur, c.callDurDesc, name, k.outcome)
	})
	c.attempts.Each(func(k attemptKey, h *histogram) {
		attempt := ""
		if k.attempt > 0 {
			attempt = strconv.Itoa(k.attempt)
		}
		e.histogram(h, c.attemptDurDesc, e.name(k.name), attempt, k.outcome)
	})
	if c.registry != nil {
		for _, s := range c.registry.Snapshots() {
			name := e.name(s.Name)
			e.counter(c.refusedDesc, float64(s.Refused), string(s.Kind), name)
			if s.State != "" {
				state := s.State
				if !utf8.ValidString(state) { // a guard of one's own may say anything
					state = strings.ToValidUTF8(state, "\uFFFD")
					e.sanitized++
				}
				e.gauge(c.stateDesc, 1, string(s.Kind), name, state)
			}
			for i := range s.Values {
				v := &s.Values[i]
				d := c.values.desc(s.Kind, v)
				switch {
				case d == nil: // named like one of the Collector's own metrics, or from invalid UTF-8
					e.dropped++
				case v.Type == telemetry.CounterValue:
					e.counter(d, v.Value, name)
				default:
					e.gauge(d, v.Value, name)
				}
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(c.sanitizedDesc, prometheus.GaugeValue, float64(e.sanitized))
	ch <- prometheus.MustNewConstMetric(c.droppedDesc, prometheus.GaugeValue, float64(e.dropped))
}

// emitter sends the series of one collection, sanitising names that are
// not valid UTF-8 and leaving out the series it cannot send.
type emitter struct {
	ch                 chan<- prometheus.Metric
	sanitized, dropped int
	bad                bool                   // the name last given to name was sanitised
	seen               map[seriesKey]struct{} // the series sent
}

// name returns n as a label value: n if it is valid UTF-8, else n with
// its invalid bytes replaced by U+FFFD. It holds for the series sent until
// the next call.
func (e *emitter) name(n string) string {
	e.bad = !utf8.ValidString(n)
	if e.bad {
		return strings.ToValidUTF8(n, "\uFFFD")
	}
	return n
}

// admit reports whether the series of desc with labels (the first of
// which, after desc's own, holds the last name given to name) may be
// sent: not if it reads as one sent before in the collection, as a
// sanitised name can (U+FFFD for its bad bytes, a valid name may hold
// too), and a guard's value can (the values of two kinds may give one
// metric name: "my-cache" and "my_cache" read alike once sanitised; kind
// "a_b" with value "c" and kind "a" with value "b_c" give
// resilience_a_b_c). It counts a sanitised series sent and a series left
// out.
func (e *emitter) admit(desc *prometheus.Desc, labels []string) bool {
	key := seriesKey{desc, strings.Join(labels, "\x00")}
	if _, dup := e.seen[key]; dup {
		e.dropped++
		return false
	}
	if e.seen == nil {
		e.seen = make(map[seriesKey]struct{})
	}
	e.seen[key] = struct{}{}
	if e.bad {
		e.sanitized++
	}
	return true
}

// seriesKey is a series of a collection: its metric's description (one
// per metric name) and its label values.
type seriesKey struct {
	desc   *prometheus.Desc
	labels string
}

// send sends m, or counts it dropped if it could not be made.
func (e *emitter) send(m prometheus.Metric, err error) {
	if err != nil {
		e.dropped++
		return
	}
	e.ch <- m
}

func (e *emitter) counter(desc *prometheus.Desc, v float64, labels ...string) {
	if e.admit(desc, labels) {
		e.send(prometheus.NewConstMetric(desc, prometheus.CounterValue, v, labels...))
	}
}

func (e *emitter) gauge(desc *prometheus.Desc, v float64, labels ...string) {
	if e.admit(desc, labels) {
		e.send(prometheus.NewConstMetric(desc, prometheus.GaugeValue, v, labels...))
	}
}

func (e *emitter) histogram(h *histogram, desc *prometheus.Desc, labels ...string) {
	if e.admit(desc, labels) {
		e.send(h.metric(desc, labels...))
	}
}

var _ prometheus.Collector = (*Collector)(nil)
var _ telemetry.Observer = (*Collector)(nil)
