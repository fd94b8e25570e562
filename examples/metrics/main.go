// Command metrics runs the outage of examples/httpclient with both
// exporters on: a price server on 127.0.0.1 serves normally, then fails
// (500s), then hangs, then recovers, while callers go through
//
//	fallback > retry(prices) > breaker(prices) > timeout
//
// The policies' one observer is a telemetry.Registry, which a
// resilienceotel.Metrics and a resilienceprom.Collector both observe: they
// get the events, and the calls' and attempts' durations from the retry's
// events (no Measure layer); the breaker is in the registry, whose
// snapshots both read. The Collector is served at /metrics on a
// second loopback server, which the command scrapes each second for its
// table and at the end for a few lines; the OpenTelemetry side is read
// through a ManualReader. It exits 1 unless the scrapes show the breaker
// opening and closing again and calls refused, and the two exporters count
// the same calls.
//
//	go run .
//	go run . -rate 50 -phase 2s
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"

	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencehttp"
	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/resilienceprom"
	"github.com/f0b5b96b/resilience/telemetry"
)

// config is what the flags set.
type config struct {
	rate     float64       // calls per second
	phase    time.Duration // length of each server phase
	timeout  time.Duration // per attempt
	attempts int           // per call, the first included
	cooldown time.Duration // first cooldown; it doubles while trials fail
}

func main() {
	var c config
	flag.Float64Var(&c.rate, "rate", 25, "calls per second")
	flag.DurationVar(&c.phase, "phase", 1500*time.Millisecond, "length of each server phase: healthy, failing, hanging, recovered")
	flag.DurationVar(&c.timeout, "timeout", 150*time.Millisecond, "timeout of each attempt")
	flag.IntVar(&c.attempts, "attempts", 3, "attempts per call, the first included")
	flag.DurationVar(&c.cooldown, "cooldown", 500*time.Millisecond, "first cooldown of the breaker (doubles while trials fail, up to 4x)")
	flag.Parse()
	switch {
	case flag.NArg() > 0:
		fmt.Fprintf(os.Stderr, "metrics: unexpected arguments %q (flags only; -h lists them)\n", flag.Args())
		os.Exit(2)
	case !(c.rate > 0 && c.rate <= 1000), c.phase < 500*time.Millisecond, c.timeout <= 0, c.attempts < 1, c.cooldown <= 0:
		fmt.Fprintln(os.Stderr, "metrics: -rate must be in (0, 1000], -phase >= 500ms, -timeout and -cooldown > 0, -attempts >= 1")
		os.Exit(2)
	}
	if !run(c, os.Stdout) {
		os.Exit(1)
	}
}

// phase is what the server does at a moment of the run.
type phase int

const (
	healthy phase = iota
	failing
	hanging
	recovered
)

func (p phase) String() string { return [...]string{"healthy", "failing", "hanging", "recovered"}[p] }

func run(c config, out io.Writer) bool {
	start := time.Now()
	phaseAt := func(t time.Time) phase { return phase(min(int(t.Sub(start)/c.phase), int(recovered))) }

	// The price server, misbehaving on cue.
	priceURL, stopPrices, err := serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch phaseAt(time.Now()) {
		case failing:
			http.Error(w, "database unavailable", http.StatusInternalServerError)
		case hanging:
			select {
			case <-r.Context().Done():
			case <-time.After(c.phase):
			}
		default:
			fmt.Fprint(w, "42.00")
		}
	}))
	if err != nil {
		fmt.Fprintln(out, "metrics:", err)
		return false
	}
	defer stopPrices()

	// Both exporters, reading one registry. OpenTelemetry: an SDK provider
	// with a ManualReader (in a service, a periodic reader and an OTLP
	// exporter). Prometheus: the Collector in a registry served at /metrics.
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer provider.Shutdown(context.Background())
	reg := telemetry.NewRegistry()
	otelMetrics, err := resilienceotel.New(provider, resilienceotel.WithRegistry(reg))
	if err != nil {
		fmt.Fprintln(out, "metrics:", err)
		return false
	}
	defer otelMetrics.Close()
	promReg := prometheus.NewRegistry()
	_, err = resilienceprom.New(promReg, resilienceprom.WithRegistry(reg))
	if err != nil {
		fmt.Fprintln(out, "metrics:", err)
		return false
	}

	// The client pipeline. Its one observer is the registry, which both
	// exporters observe (WithRegistry): they get every event, and the
	// retry's call and attempt durations, with no layer of theirs in the
	// chain.
	obs := reg
	b := breaker.New(breaker.WithConfig(breaker.Config{
		Name:            "prices",
		FailureRatio:    0.5,
		WindowCalls:     20,
		MinCalls:        10,
		CooldownBackoff: backoff.Exponential(c.cooldown, 2, 4*c.cooldown),
		Observer:        obs,
	}))
	if err := reg.Register(b); err != nil {
		fmt.Fprintln(out, "metrics:", err)
		return false
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(promReg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	metricsURL, stopMetrics, err := serve(mux)
	if err != nil {
		fmt.Fprintln(out, "metrics:", err)
		return false
	}
	defer stopMetrics()
	metricsURL += "/metrics"
	pipeline := resilience.Then(
		resilience.Fallback(func(ctx context.Context, err error) (*http.Response, error) { return cached(), nil }),
		retry.New[*http.Response](
			retry.WithName("prices"),
			retry.WithAttempts(c.attempts),
			retry.WithMaxElapsed(400*time.Millisecond),
			retry.WithBackoff(backoff.Exponential(20*time.Millisecond, 2, 200*time.Millisecond).WithJitter(backoff.Full)),
			retry.WithObserver(obs),
		),
		breaker.Policy[*http.Response](b),
		timeout.New[*http.Response](c.timeout),
	)
	client := &http.Client{Transport: &resiliencehttp.Transport{Policy: pipeline}}
	fmt.Fprintf(out, "pipeline: %s\n", pipeline)
	fmt.Fprintf(out, "prices at %s, phases of %v: healthy, failing (500s), hanging, recovered\n", priceURL, c.phase)
	fmt.Fprintf(out, "Prometheus metrics at %s; each second, from a scrape of it: the breaker's state,\n"+
		"calls through the pipeline by outcome (resilience_calls_total{policy=\"pipeline\"}), retries\n"+
		"(resilience_events_total{event=\"retry.waiting\"}) and the breaker's refusals (resilience_guard_refused_total)\n\n", metricsURL)
	fmt.Fprintf(out, "%6s  %-9s  %-9s  %7s  %7s  %8s  %7s  %7s\n", "time", "server", "breaker", "success", "failure", "rejected", "retries", "refused")

	var last series
	printSecond := func(now time.Time) bool {
		s, _, err := scrape(metricsURL)
		if err != nil {
			fmt.Fprintln(out, "metrics: scrape:", err)
			return false
		}
		d := func(name string) int { return int(s[name] - last[name]) }
		fmt.Fprintf(out, "%5.1fs  %-9s  %-9s  %7d  %7d  %8d  %7d  %7d\n",
			now.Sub(start).Seconds(), phaseAt(now.Add(-time.Millisecond)), s.breakerState(),
			d(pipelineCalls("success")), d(pipelineCalls("failure")), d(pipelineCalls("rejected")),
			d(retries), d(refused))
		last = s
		return true
	}

	// The callers: a steady rate, each call on its own goroutine.
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Duration(float64(time.Second) / c.rate))
	report := time.NewTicker(time.Second)
	defer tick.Stop()
	defer report.Stop()
	end := time.After(4 * c.phase)
	lastPrint := start
loop:
	for {
		select {
		case <-tick.C:
			wg.Go(func() {
				resp, err := client.Get(priceURL + "/price")
				if err != nil {
					return
				}
				defer resp.Body.Close()
				_, _ = io.Copy(io.Discard, resp.Body)
			})
		case now := <-report.C:
			if !printSecond(now) {
				return false
			}
			lastPrint = now
		case now := <-end:
			wg.Wait()
			if now.Sub(lastPrint) > 100*time.Millisecond && !printSecond(now) {
				return false
			}
			break loop
		}
	}

	// A few lines of the last scrape, and the same from OpenTelemetry.
	s, text, err := scrape(metricsURL)
	if err != nil {
		fmt.Fprintln(out, "metrics: scrape:", err)
		return false
	}
	fmt.Fprintf(out, "\nfrom %s (%d lines), a few:\n", metricsURL, strings.Count(text, "\n"))
	for _, line := range strings.Split(text, "\n") {
		for _, prefix := range []string{
			"resilience_calls_total{", "resilience_guard_state{",
			`resilience_events_total{event="breaker.`, "resilience_call_duration_seconds_count{",
			"resilience_attempt_duration_seconds_count{",
		} {
			if strings.HasPrefix(line, prefix) {
				fmt.Fprintln(out, "  "+line)
			}
		}
	}
	otelCalls, err := otelPipelineCalls(reader)
	if err != nil {
		fmt.Fprintln(out, "metrics: OpenTelemetry:", err)
		return false
	}
	fmt.Fprintf(out, "\nfrom OpenTelemetry, resilience.calls{resilience.policy.type=pipeline}:")
	for _, o := range []string{"success", "failure", "rejected", "ignored"} {
		fmt.Fprintf(out, " %s %d", o, otelCalls[o])
	}
	fmt.Fprintln(out)

	// The checks.
	ok := true
	fail := func(format string, args ...any) {
		fmt.Fprintf(out, "FAIL: "+format+"\n", args...)
		ok = false
	}
	for _, e := range []string{"opened", "half_opened", "closed"} {
		if s[breakerEvents(e)] < 1 {
			fail("no breaker.%s in the scrape", e)
		}
	}
	if s[pipelineCalls("rejected")] < 1 {
		fail("no call was refused")
	}
	if st := s.breakerState(); st != telemetry.StateClosed {
		fail("the breaker ended %s, not closed", st)
	}
	for _, o := range []string{"success", "failure", "rejected", "ignored"} {
		if p := int64(s[pipelineCalls(o)]); p != otelCalls[o] {
			fail("%s calls: %d in Prometheus, %d in OpenTelemetry", o, p, otelCalls[o])
		}
	}
	if ok {
		fmt.Fprintf(out, "the breaker opened %d times and ended closed; the exporters agree on every call\n", int(s[breakerEvents("opened")]))
	}
	return ok
}

// series are the samples of a scrape by series, as the exposition writes
// them: `name{label="value",...}`.
type series map[string]float64

const (
	retries = `resilience_events_total{event="retry.waiting",name="prices",policy="retry"}`
	refused = `resilience_guard_refused_total{name="prices",policy="breaker"}`
)

func pipelineCalls(outcome string) string {
	return `resilience_calls_total{name="prices",outcome="` + outcome + `",policy="pipeline"}`
}

func breakerEvents(e string) string {
	return `resilience_events_total{event="breaker.` + e + `",name="prices",policy="breaker"}`
}

// breakerState is the state of the prices breaker's series of
// resilience_guard_state (1, with the state as a label).
func (s series) breakerState() string {
	for _, st := range []string{telemetry.StateClosed, telemetry.StateOpen, telemetry.StateHalfOpen} {
		if s[`resilience_guard_state{name="prices",policy="breaker",state="`+st+`"}`] == 1 {
			return st
		}
	}
	return "?"
}

// scrape GETs url and returns its samples and its text.
func scrape(url string) (series, string, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("%s: %s", url, resp.Status)
	}
	s := make(series)
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if strings.HasPrefix(line, "#") || i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			s[line[:i]] = v
		}
	}
	return s, string(body), nil
}

// otelPipelineCalls collects reader and returns the pipeline's calls by
// outcome from resilience.calls.
func otelPipelineCalls(reader *sdkmetric.ManualReader) (map[string]int64, error) {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		return nil, err
	}
	calls := make(map[string]int64)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if m.Name != "resilience.calls" || !ok {
				continue
			}
			for _, p := range sum.DataPoints {
				if t, _ := p.Attributes.Value(attribute.Key("resilience.policy.type")); t.AsString() != "pipeline" {
					continue
				}
				o, _ := p.Attributes.Value(attribute.Key("resilience.outcome"))
				calls[o.AsString()] += p.Value // summed over error.type
			}
		}
	}
	if len(calls) == 0 {
		return nil, errors.New("no resilience.calls of the pipeline")
	}
	return calls, nil
}

// serve serves h on 127.0.0.1 and returns its base URL and a stop func.
func serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// cached is the fallback: the last known price, marked as such.
func cached() *http.Response {
	return &http.Response{
		StatusCode: http.StatusOK,
		Status:     "200 OK",
		Header:     http.Header{"X-From-Cache": {"1"}},
		Body:       io.NopCloser(strings.NewReader("41.50")),
	}
}
