package resilienceprom_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resilienceprom"
	"github.com/f0b5b96b/resilience/telemetry"
)

// samples prints the samples of the metrics named names that c collects,
// without HELP and TYPE lines.
func samples(c prometheus.Collector, names ...string) {
	text, err := testutil.CollectAndFormat(c, expfmt.TypeTextPlain, names...)
	if err != nil {
		panic(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(text)), "\n") {
		if !strings.HasPrefix(line, "#") {
			fmt.Println(line)
		}
	}
}

// A breaker and a retry observed through the registry, whose observer
// the Collector is (WithRegistry): a failing call trips the breaker, and
// a scrape reads the events counted, the call's and its attempts'
// durations (from the retry's events, with no layer of the Collector's in
// the chain) and the breaker's state. New registers the Collector (with
// prometheus.DefaultRegisterer, serve promhttp.Handler() to expose it).
func Example() {
	reg := telemetry.NewRegistry()
	c, err := resilienceprom.New(prometheus.NewRegistry(), resilienceprom.WithRegistry(reg))
	if err != nil {
		panic(err)
	}
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
	samples(c, "resilience_calls_total", "resilience_events_total", "resilience_guard_state")
	// The durations' counts (their sums and buckets are the real clock's).
	text, _ := testutil.CollectAndFormat(c, expfmt.TypeTextPlain, "resilience_call_duration_seconds", "resilience_attempt_duration_seconds")
	for _, line := range strings.Split(string(text), "\n") {
		if strings.Contains(line, "_count{") {
			fmt.Println(line)
		}
	}
	// Output:
	// retry: gave up after 2 attempts: down
	// resilience_calls_total{name="db",outcome="failure",policy="breaker"} 2
	// resilience_calls_total{name="db",outcome="failure",policy="pipeline"} 1
	// resilience_calls_total{name="db",outcome="failure",policy="retry"} 1
	// resilience_events_total{event="breaker.failure",name="db",policy="breaker"} 2
	// resilience_events_total{event="breaker.opened",name="db",policy="breaker"} 1
	// resilience_events_total{event="retry.attempt",name="db",policy="retry"} 2
	// resilience_events_total{event="retry.attempt_failed",name="db",policy="retry"} 2
	// resilience_events_total{event="retry.call",name="db",policy="retry"} 1
	// resilience_events_total{event="retry.gave_up",name="db",policy="retry"} 1
	// resilience_events_total{event="retry.waiting",name="db",policy="retry"} 1
	// resilience_guard_state{name="db",policy="breaker",state="open"} 1
	// resilience_attempt_duration_seconds_count{attempt="1",name="db",outcome="failure"} 1
	// resilience_attempt_duration_seconds_count{attempt="2",name="db",outcome="failure"} 1
	// resilience_call_duration_seconds_count{name="db",outcome="failure"} 1
}

// Measure's layers around a retry: the call and each attempt are timed
// and counted, the attempts numbered (here on a fake clock: durations of
// 0, in histograms of one bucket).
func ExampleMeasure() {
	c, err := resilienceprom.New(prometheus.NewRegistry(), resilienceprom.WithClock(clock.NewFake()), resilienceprom.WithBuckets(1))
	if err != nil {
		panic(err)
	}
	l := resilienceprom.Measure[string](c, "prices", 3)
	p := resilience.Then(l.Call, retry.New[string](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0))), l.Attempt)
	fmt.Println(p)
	n := 0
	v, err := p.Do(context.Background(), func(context.Context) (string, error) {
		if n++; n < 2 {
			return "", errors.New("busy")
		}
		return "42.00", nil
	})
	fmt.Println(v, err)
	samples(c, "resilience_calls_total", "resilience_attempt_duration_seconds")
	// Output:
	// measure(prices) > retry > measure-attempt(prices)
	// 42.00 <nil>
	// resilience_attempt_duration_seconds_bucket{attempt="1",name="prices",outcome="failure",le="1"} 1
	// resilience_attempt_duration_seconds_bucket{attempt="1",name="prices",outcome="failure",le="+Inf"} 1
	// resilience_attempt_duration_seconds_sum{attempt="1",name="prices",outcome="failure"} 0
	// resilience_attempt_duration_seconds_count{attempt="1",name="prices",outcome="failure"} 1
	// resilience_attempt_duration_seconds_bucket{attempt="2",name="prices",outcome="success",le="1"} 1
	// resilience_attempt_duration_seconds_bucket{attempt="2",name="prices",outcome="success",le="+Inf"} 1
	// resilience_attempt_duration_seconds_sum{attempt="2",name="prices",outcome="success"} 0
	// resilience_attempt_duration_seconds_count{attempt="2",name="prices",outcome="success"} 1
	// resilience_calls_total{name="prices",outcome="success",policy="pipeline"} 1
}

// WithBuckets sets the histograms' bounds, here for waits of a few
// milliseconds to a second.
func ExampleWithBuckets() {
	c, err := resilienceprom.New(prometheus.NewRegistry(), resilienceprom.WithBuckets(0.01, 0.1, 1))
	if err != nil {
		panic(err)
	}
	for _, w := range []time.Duration{5 * time.Millisecond, 50 * time.Millisecond, 2 * time.Second} {
		c.Observe(telemetry.Event{Type: retry.EventWaiting, Name: "db", Attempt: 1, Wait: w})
	}
	samples(c, "resilience_wait_duration_seconds")
	// Output:
	// resilience_wait_duration_seconds_bucket{event="retry.waiting",name="db",policy="retry",le="0.01"} 1
	// resilience_wait_duration_seconds_bucket{event="retry.waiting",name="db",policy="retry",le="0.1"} 2
	// resilience_wait_duration_seconds_bucket{event="retry.waiting",name="db",policy="retry",le="1"} 2
	// resilience_wait_duration_seconds_bucket{event="retry.waiting",name="db",policy="retry",le="+Inf"} 3
	// resilience_wait_duration_seconds_sum{event="retry.waiting",name="db",policy="retry"} 2.055
	// resilience_wait_duration_seconds_count{event="retry.waiting",name="db",policy="retry"} 3
}
