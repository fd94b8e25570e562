package resilienceprom_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resilienceprom"
	"github.com/f0b5b96b/resilience/resilienceprom/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// allTypes is every event type of package telemetry's table, with the
// fields that table gives it; see exporttest.AllTypes.
var allTypes = exporttest.AllTypes(downError{})

// TestEveryEventType observes one event of every type in the telemetry
// table, from a policy named "x": each counts in resilience_events_total;
// those that are a call's outcome count in resilience_calls_total too; those
// with a wait record it (bulkhead.refused: time in the queue before the
// refusal). A breaker.Keyed's breaker.evicted is neither: it counts in
// resilience_events_total only, under policy "breaker" (its Key is no
// label).
func TestEveryEventType(t *testing.T) {
	c := newCollector(t, resilienceprom.WithBuckets(0.05, 0.15))
	for _, e := range allTypes {
		e.Name = "x"
		c.Observe(e)
	}
	// A rejection straight from a full bulkhead (no wait) and a wait of
	// Never are counted and not recorded as waits.
	c.Observe(telemetry.Event{Type: bulkhead.EventRefused, Name: "y", Err: resilience.Refuse(bulkhead.ErrFull, "y", -1)})
	c.Observe(telemetry.Event{Type: retry.EventWaiting, Name: "y", Wait: resilience.Never})
	var want strings.Builder
	want.WriteString("# HELP resilience_events_total Events the policies reported, by event (package telemetry's table).\n# TYPE resilience_events_total counter\n")
	for _, e := range allTypes {
		fmt.Fprintf(&want, "resilience_events_total{event=%q,name=\"x\",policy=%q} 1\n", e.Type, e.Type.Kind())
	}
	want.WriteString(`resilience_events_total{event="bulkhead.refused",name="y",policy="bulkhead"} 1
resilience_events_total{event="retry.waiting",name="y",policy="retry"} 1
# HELP resilience_calls_total Calls through a policy, by outcome: success, failure, rejected (a guard refused it) or ignored.
# TYPE resilience_calls_total counter
resilience_calls_total{name="x",outcome="rejected",policy="breaker"} 1
resilience_calls_total{name="x",outcome="failure",policy="breaker"} 1
resilience_calls_total{name="x",outcome="ignored",policy="breaker"} 1
resilience_calls_total{name="x",outcome="failure",policy="retry"} 1
resilience_calls_total{name="x",outcome="success",policy="pipeline"} 1
resilience_calls_total{name="x",outcome="failure",policy="timeout"} 1
resilience_calls_total{name="x",outcome="rejected",policy="bulkhead"} 1
resilience_calls_total{name="x",outcome="rejected",policy="ratelimit"} 1
resilience_calls_total{name="y",outcome="rejected",policy="bulkhead"} 1
# HELP resilience_wait_duration_seconds Waits the policies reported: a retry's backoff, time in a bulkhead's queue, for a rate limiter's token.
# TYPE resilience_wait_duration_seconds histogram
`)
	b := []float64{0.05, 0.15}
	for _, w := range []struct {
		event  telemetry.Type
		values []float64
	}{
		{retry.EventWaiting, []float64{0.2}},
		{bulkhead.EventQueuedAdmitted, []float64{0.03}},
		{bulkhead.EventRefused, []float64{0.1}},
		{ratelimit.EventWaited, []float64{0.01}},
	} {
		want.WriteString(histogram("resilience_wait_duration_seconds", fmt.Sprintf("event=%q,name=\"x\",policy=%q", w.event, w.event.Kind()), b, w.values...))
	}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want.String()),
		"resilience_events_total", "resilience_calls_total", "resilience_wait_duration_seconds"); err != nil {
		t.Error(err)
	}
}

// TestPedantic: a pedantic registry, which checks that every metric
// collected is described, consistent and unique, gathers the scripted
// outage, every event type and a breaker in each state without error.
func TestPedantic(t *testing.T) {
	c := outage(t)
	for _, e := range allTypes {
		e.Name = "x"
		c.Observe(e)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("pedantic Gather: %v", err)
	}
	var got []string
	for _, mf := range mfs {
		got = append(got, mf.GetName())
	}
	want := []string{ // every metric, in name order
		"resilience_attempt_duration_seconds",
		"resilience_breaker_consecutive_failures",
		"resilience_breaker_consecutive_successes",
		"resilience_breaker_cooldown_left_seconds",
		"resilience_breaker_failure_ratio",
		"resilience_breaker_forced",
		"resilience_breaker_generation",
		"resilience_breaker_open_for_seconds",
		"resilience_breaker_window_calls",
		"resilience_breaker_window_failures",
		"resilience_breaker_window_refused",
		"resilience_breaker_window_slow",
		"resilience_breaker_window_successes",
		"resilience_bulkhead_in_flight",
		"resilience_bulkhead_limit",
		"resilience_bulkhead_queued",
		"resilience_call_duration_seconds",
		"resilience_calls_total",
		"resilience_events_total",
		"resilience_exporter_dropped_series",
		"resilience_exporter_sanitized_series",
		"resilience_guard_refused_total",
		"resilience_guard_state",
		"resilience_ratelimit_burst",
		"resilience_ratelimit_rate_per_second",
		"resilience_ratelimit_tokens",
		"resilience_wait_duration_seconds",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics mismatch (-want +got):\n%s", diff)
	}
	if n, err := testutil.GatherAndCount(reg); err != nil || n == 0 {
		t.Errorf("GatherAndCount = %d, %v", n, err)
	}
}

// TestScrape serves the Collector through promhttp on a real loopback
// server and scrapes /metrics: the breaker that the outage opened and
// closed again is there, with the events and calls.
func TestScrape(t *testing.T) {
	c := outage(t)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	srv := httptest.NewServer(mux) // on 127.0.0.1
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("server at %s, want the loopback", srv.URL)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s\n%s", resp.Status, body)
	}
	for _, line := range []string{
		`resilience_guard_state{name="prices",policy="breaker",state="closed"} 1`,
		`resilience_events_total{event="breaker.opened",name="prices",policy="breaker"} 1`,
		`resilience_calls_total{name="prices",outcome="success",policy="pipeline"} 4`,
		`resilience_calls_total{name="prices",outcome="rejected",policy="breaker"} 1`,
		`resilience_call_duration_seconds_count{name="prices",outcome="success"} 4`,
		`resilience_bulkhead_in_flight{name="db"} 3`,
		`resilience_ratelimit_tokens{name="api"} -1.5`,
	} {
		if !strings.Contains(string(body), line+"\n") {
			t.Errorf("scrape has no line %q", line)
		}
	}
	if t.Failed() {
		t.Logf("scraped:\n%s", body)
	}
}

// TestMeasure: attempts past Measure's bound are recorded as the last
// number; an attempt layer without its call layer has attempt ""; a call
// whose caller gave up is ignored; two nested Measures count their own
// attempts.
func TestMeasure(t *testing.T) {
	clk := clock.NewFake()
	c := newCollector(t, resilienceprom.WithClock(clk), resilienceprom.WithBuckets(1))
	outer := resilienceprom.Measure[int](c, "outer", 3)
	inner := resilienceprom.Measure[int](c, "inner", 3)
	lone := resilienceprom.Measure[int](c, "lone", 3)
	p := resilience.Then(outer.Call, retry.New[int](retry.WithAttempts(5), retry.WithBackoff(backoff.Constant(0))),
		outer.Attempt, inner.Call, inner.Attempt, lone.Attempt)
	n := 0
	if _, err := p.Do(context.Background(), func(context.Context) (int, error) {
		n++
		clk.Advance(time.Second)
		if n < 5 {
			return 0, downError{}
		}
		return n, nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, _ = outer.Call.Do(ctx, func(context.Context) (int, error) { cancel(); return 0, downError{} })

	hist := func(labels string, values ...float64) string {
		return histogram("resilience_attempt_duration_seconds", labels, []float64{1}, values...)
	}
	want := "# HELP resilience_attempt_duration_seconds Duration of each attempt of a call, by attempt number.\n# TYPE resilience_attempt_duration_seconds histogram\n" +
		hist(`attempt="1",name="outer",outcome="failure"`, 1) +
		hist(`attempt="2",name="outer",outcome="failure"`, 1) +
		hist(`attempt="3",name="outer",outcome="failure"`, 1, 1) +
		hist(`attempt="3",name="outer",outcome="success"`, 1) +
		hist(`attempt="1",name="inner",outcome="failure"`, 1, 1, 1, 1) + // each attempt of outer is a call of inner
		hist(`attempt="1",name="inner",outcome="success"`, 1) +
		hist(`attempt="",name="lone",outcome="failure"`, 1, 1, 1, 1) +
		hist(`attempt="",name="lone",outcome="success"`, 1) +
		`# HELP resilience_calls_total Calls through a policy, by outcome: success, failure, rejected (a guard refused it) or ignored.
# TYPE resilience_calls_total counter
resilience_calls_total{name="outer",outcome="success",policy="pipeline"} 1
resilience_calls_total{name="outer",outcome="ignored",policy="pipeline"} 1
resilience_calls_total{name="inner",outcome="failure",policy="pipeline"} 4
resilience_calls_total{name="inner",outcome="success",policy="pipeline"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "resilience_attempt_duration_seconds", "resilience_calls_total"); err != nil {
		t.Error(err)
	}
}

// TestPanics: invalid options and Measure arguments panic, naming them.
func TestPanics(t *testing.T) {
	c := newCollector(t)
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"registerer", func() { _, _ = resilienceprom.New(nil) }, "resilienceprom: New(nil, ...): the Registerer must not be nil; pass prometheus.DefaultRegisterer for the default registry"},
		{"nil option", func() { _, _ = resilienceprom.New(prometheus.NewRegistry(), nil) }, "resilienceprom: New option must not be nil"},
		{"registry", func() { resilienceprom.WithRegistry(nil) }, "resilienceprom: WithRegistry registry must not be nil"},
		{"clock", func() { resilienceprom.WithClock(nil) }, "resilienceprom: WithClock(nil): the clock must not be nil; leave the option out for clock.Real()"},
		{"no buckets", func() { resilienceprom.WithBuckets() }, "resilienceprom: WithBuckets needs at least one bound"},
		{"buckets", func() { resilienceprom.WithBuckets(1, 1) }, "resilienceprom: WithBuckets bounds must be finite and increasing, got [1 1]"},
		{"measure nil", func() { resilienceprom.Measure[int](nil, "x", 1) }, "resilienceprom: Measure collector must not be nil"},
		{"measure name", func() { resilienceprom.Measure[int](c, "", 1) }, "resilienceprom: Measure name must not be empty"},
		{"measure attempts", func() { resilienceprom.Measure[int](c, "x", 0) }, "resilienceprom: Measure attempts must be >= 1, got 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != tc.want {
					t.Errorf("panic %v, want %q", r, tc.want)
				}
			}()
			tc.f()
		})
	}
}

// TestConcurrent observes, measures and scrapes from many goroutines at
// once (for the race detector); no count is lost.
func TestConcurrent(t *testing.T) {
	reg := telemetry.NewRegistry()
	b := breaker.New(breaker.WithName("b"))
	if err := reg.Register(b); err != nil {
		t.Fatal(err)
	}
	c := newCollector(t, resilienceprom.WithRegistry(reg))
	l := resilienceprom.Measure[int](c, "p", 3)
	p := l.Call.Then(breaker.Policy[int](b), l.Attempt)
	const goroutines, each = 8, 200
	done := make(chan struct{})
	scraped := make(chan struct{})
	go func() {
		defer close(scraped)
		for {
			select {
			case <-done:
				return
			default:
				if _, err := testutil.GatherAndCount(prometheus.Gatherers{must(t, c)}); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for i := range each {
				c.Observe(telemetry.Event{Type: ratelimit.EventWaited, Name: "api", Wait: time.Millisecond})
				_, _ = p.Do(context.Background(), func(context.Context) (int, error) { return i, nil })
			}
		})
	}
	wg.Wait()
	close(done)
	<-scraped
	want := fmt.Sprintf(`# HELP resilience_calls_total Calls through a policy, by outcome: success, failure, rejected (a guard refused it) or ignored.
# TYPE resilience_calls_total counter
resilience_calls_total{name="p",outcome="success",policy="pipeline"} %[1]d
# HELP resilience_events_total Events the policies reported, by event (package telemetry's table).
# TYPE resilience_events_total counter
resilience_events_total{event="ratelimit.waited",name="api",policy="ratelimit"} %[1]d
`, goroutines*each)
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "resilience_calls_total", "resilience_events_total"); err != nil {
		t.Error(err)
	}
}

func must(t *testing.T, c prometheus.Collector) *prometheus.Registry {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Error(err)
	}
	return reg
}

// TestNewRegisters: New registers the Collector with its Registerer, whose
// Gather then reads it, and returns the Registerer's error, and no
// Collector, when it refuses: a second Collector's metrics have the names
// of the first's.
func TestNewRegisters(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c, err := resilienceprom.New(reg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	c.Observe(telemetry.Event{Type: breaker.EventOpened, Name: "b"})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mf := range mfs {
		found = found || mf.GetName() == "resilience_events_total"
	}
	if !found {
		t.Errorf("the registry New was given gathers no resilience_events_total: %d families", len(mfs))
	}
	second, err := resilienceprom.New(reg)
	if err == nil || second != nil || !strings.HasPrefix(err.Error(), "resilienceprom: ") {
		t.Errorf("a second New on the same registry = %v, %v; want nil and an error starting \"resilienceprom: \"", second, err)
	}
}
