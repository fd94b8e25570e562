package resilienceotel_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/telemetry"
)

// print writes the sums and gauges of rm, one line per point, sorted.
func print(rm metricdata.ResourceMetrics) {
	var lines []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			var pts []metricdata.DataPoint[int64]
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				pts = d.DataPoints
			case metricdata.Gauge[int64]:
				pts = d.DataPoints
			}
			for _, p := range pts {
				var kv []string
				for _, a := range p.Attributes.ToSlice() {
					kv = append(kv, string(a.Key)+"="+a.Value.String())
				}
				lines = append(lines, fmt.Sprintf("%s{%s} %d", m.Name, strings.Join(kv, ","), p.Value))
			}
		}
	}
	sort.Strings(lines)
	fmt.Println(strings.Join(lines, "\n"))
}

// A breaker and a retry observed by a Metrics, the breaker in its
// registry: a failing call trips the breaker, and a collection reads the
// events counted and the breaker's state.
func Example() {
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	reg := telemetry.NewRegistry()
	m, err := resilienceotel.New(provider, resilienceotel.WithRegistry(reg))
	if err != nil {
		panic(err)
	}
	defer m.Close()

	// The policies' one observer is the registry, which m observes
	// (WithRegistry): the events, and the durations of the retry's call
	// and attempts (resilience.call.duration, resilience.attempt.duration),
	// reach m with no layer of its own in the chain.
	b := breaker.New(breaker.WithName("db"), breaker.WithThreshold(2), breaker.WithObserver(reg))
	if err := reg.Register(b); err != nil {
		panic(err)
	}
	p := resilience.Then(
		retry.New[int](retry.WithName("db"), retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(0)), retry.WithObserver(reg)),
		breaker.Policy[int](b),
	)
	_, err = p.Do(context.Background(), func(context.Context) (int, error) { return 0, errors.New("down") })
	fmt.Println(err)

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	print(filter(rm, "resilience.events", "resilience.calls", "resilience.guard.state"))
	// Output:
	// retry: gave up after 2 attempts: down
	// resilience.calls{error.type=*errors.errorString,resilience.outcome=failure,resilience.policy.name=db,resilience.policy.type=breaker} 2
	// resilience.calls{error.type=*errors.errorString,resilience.outcome=failure,resilience.policy.name=db,resilience.policy.type=pipeline} 1
	// resilience.calls{error.type=retry.attempts,resilience.outcome=failure,resilience.policy.name=db,resilience.policy.type=retry} 1
	// resilience.events{error.type=*errors.errorString,event.name=breaker.failure,resilience.policy.name=db,resilience.policy.type=breaker} 2
	// resilience.events{error.type=*errors.errorString,event.name=retry.attempt,resilience.policy.name=db,resilience.policy.type=retry} 2
	// resilience.events{error.type=*errors.errorString,event.name=retry.attempt_failed,resilience.policy.name=db,resilience.policy.type=retry} 2
	// resilience.events{error.type=*errors.errorString,event.name=retry.call,resilience.policy.name=db,resilience.policy.type=retry} 1
	// resilience.events{error.type=*errors.errorString,event.name=retry.waiting,resilience.policy.name=db,resilience.policy.type=retry} 1
	// resilience.events{error.type=retry.attempts,event.name=retry.gave_up,resilience.policy.name=db,resilience.policy.type=retry} 1
	// resilience.events{event.name=breaker.opened,resilience.policy.name=db,resilience.policy.type=breaker} 1
	// resilience.guard.state{resilience.guard.state=open,resilience.policy.name=db,resilience.policy.type=breaker} 1
}

// filter keeps the metrics named names.
func filter(rm metricdata.ResourceMetrics, names ...string) metricdata.ResourceMetrics {
	for i, sm := range rm.ScopeMetrics {
		var keep []metricdata.Metrics
		for _, m := range sm.Metrics {
			for _, n := range names {
				if m.Name == n {
					keep = append(keep, m)
				}
			}
		}
		rm.ScopeMetrics[i].Metrics = keep
	}
	return rm
}

// Measure's layers around a retry: the call and each attempt are timed
// and counted, the attempts numbered.
func ExampleMeasure() {
	reader := sdkmetric.NewManualReader()
	m, err := resilienceotel.New(
		sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		resilienceotel.WithClock(clock.NewFake()), // durations of 0 here
	)
	if err != nil {
		panic(err)
	}
	l := resilienceotel.Measure[string](m, "prices", 3)
	p := resilience.Then(l.Call, retry.New[string](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0))), l.Attempt)
	fmt.Println(p)
	n := 0
	v, err := p.Do(context.Background(), func(context.Context) (string, error) {
		if n++; n < 3 {
			return "", errors.New("busy")
		}
		return "42.00", nil
	})
	fmt.Println(v, err)

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	var lines []string
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if h, ok := m.Data.(metricdata.Histogram[float64]); ok {
			for _, p := range h.DataPoints {
				a, _ := p.Attributes.Value(attribute.Key("resilience.attempt"))
				o, _ := p.Attributes.Value(attribute.Key("resilience.outcome"))
				lines = append(lines, fmt.Sprintf("%s attempt=%s outcome=%s count=%d", m.Name, a.String(), o.String(), p.Count))
			}
		}
	}
	sort.Strings(lines)
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// measure(prices) > retry > measure-attempt(prices)
	// 42.00 <nil>
	// resilience.attempt.duration attempt=1 outcome=failure count=1
	// resilience.attempt.duration attempt=2 outcome=failure count=1
	// resilience.attempt.duration attempt=3 outcome=success count=1
	// resilience.call.duration attempt= outcome=success count=1
}

// WithKeys adds the key of a keyed guard's events, at most n per guard:
// the keys past the first two here read "_OTHER".
func ExampleWithKeys() {
	reader := sdkmetric.NewManualReader()
	m, err := resilienceotel.New(
		sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		resilienceotel.WithKeys(2),
	)
	if err != nil {
		panic(err)
	}
	for _, tenant := range []string{"acme", "globex", "acme", "initech", "umbrella"} {
		m.Observe(telemetry.Event{Type: ratelimit.EventWaited, Name: "api", Key: tenant, Wait: time.Millisecond})
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	print(filter(rm, "resilience.events"))
	// Output:
	// resilience.events{event.name=ratelimit.waited,resilience.key=_OTHER,resilience.policy.name=api,resilience.policy.type=ratelimit} 2
	// resilience.events{event.name=ratelimit.waited,resilience.key=acme,resilience.policy.name=api,resilience.policy.type=ratelimit} 2
	// resilience.events{event.name=ratelimit.waited,resilience.key=globex,resilience.policy.name=api,resilience.policy.type=ratelimit} 1
}
