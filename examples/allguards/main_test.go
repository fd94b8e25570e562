package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// startRedis returns the address of a redis-server: the one named by
// RESILIENCE_REDIS_ADDR if it is set (as CI sets it), else one it starts
// on a free 127.0.0.1 port, with a temporary directory and no
// persistence, stopped when t ends; it skips t if redis-server is not
// installed.
func startRedis(t *testing.T) string {
	t.Helper()
	if addr := os.Getenv("RESILIENCE_REDIS_ADDR"); addr != "" {
		return addr
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("allguards: this test needs redis-server (apt-get install -y redis-server)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", t.TempDir(),
		"--save", "", "--appendonly", "no", "--protected-mode", "yes")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := "127.0.0.1:" + strconv.Itoa(port)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not answer PING in 10s: %v", addr, err)
		}
	}
}

func run(t *testing.T) *Views {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	v, err := Run(ctx, startRedis(t))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Every guard of every kind, registered in one registry, shows by name in
// the Prometheus scrape, the OpenTelemetry reader, the dashboard's JSON
// and the health check.
func TestEveryGuardInEveryConsumer(t *testing.T) {
	v := run(t)
	kinds := map[string]bool{}
	for _, g := range v.Guards {
		kinds[string(g.Kind)] = true
	}
	for _, k := range []string{"breaker", "bulkhead", "ratelimit", "adaptive", "throttle", "chaos", "cache"} {
		if !kinds[k] {
			t.Errorf("no guard of kind %s among %v", k, v.Guards)
		}
	}
	if len(v.Guards) != 14 {
		t.Errorf("%d guards, want 14: %v", len(v.Guards), v.Guards)
	}
	for _, g := range v.Guards {
		for consumer, ok := range map[string]bool{
			"the Prometheus scrape": v.InScrape(g), "the OpenTelemetry reader": v.InOTel(g),
			"the dashboard's JSON": v.InDashboard(g), "the health check": v.InHealth(g),
		} {
			if !ok {
				t.Errorf("%s %q is not in %s", g.Kind, g.Name, consumer)
			}
		}
	}
	var out bytes.Buffer
	if missing := v.Report(&out); missing != 0 || t.Failed() {
		t.Errorf("Report: %d missing\n%s", missing, out.String())
	}
}

// The registry, the policies' one observer, gives the retry's call and
// attempt durations to the exporters, the dashboard and the health check,
// and the chain has no measure layer; the cache's size reads
// resilience_cache_size_bytes.
func TestLatencyWithOneObserver(t *testing.T) {
	v := run(t)
	if strings.Contains(v.Chain, "measure") || v.Chain != "retry(payments) > breaker(payments) > bulkhead(db)" {
		t.Errorf("chain %q, want retry(payments) > breaker(payments) > bulkhead(db), with no measure layer", v.Chain)
	}
	for _, prefix := range []string{
		`resilience_call_duration_seconds_count{name="payments",outcome="success"} `,
		`resilience_attempt_duration_seconds_count{attempt="1",name="payments",outcome="success"} `,
		`resilience_attempt_duration_seconds_count{attempt="1",name="payments",outcome="failure"} `,
		`resilience_attempt_duration_seconds_count{attempt="2",name="payments",outcome="success"} `,
		`resilience_cache_size_bytes{name="prices"} `,
		`resilience_cache_entries{name="prices"} `,
	} {
		if !strings.Contains(v.Scrape, prefix) {
			t.Errorf("the scrape has no %s...", prefix)
		}
	}
	if strings.Contains(v.Scrape, "_bytes_bytes") {
		t.Errorf("the scrape names a metric with its unit twice (_bytes_bytes)")
	}
	for _, inst := range []string{"resilience.call.duration", "resilience.attempt.duration"} {
		if n := otelCount(v.OTel, inst, "payments"); n == 0 {
			t.Errorf("the OpenTelemetry reader has no %s of payments", inst)
		}
	}
	var s struct {
		Guards []struct {
			Name      string
			Calls     *float64 `json:"callsPerSec"`
			LatencyMs *struct{ P50, P99 float64 }
		}
		Pipelines []struct{ Name, Chain string }
	}
	if err := json.Unmarshal(v.Dashboard, &s); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, g := range s.Guards {
		if g.Name == "payments" {
			found = true
			if g.LatencyMs == nil || g.LatencyMs.P50 <= 0 || g.Calls == nil {
				t.Errorf("dashboard tile payments: latency %v, calls/s %v; want both", g.LatencyMs, g.Calls)
			}
		}
	}
	if !found {
		t.Errorf("no dashboard tile payments in %s", v.Dashboard)
	}
	for _, p := range s.Pipelines {
		if strings.Contains(p.Chain, "measure") {
			t.Errorf("the dashboard's pipeline %s has a measure layer: %s", p.Name, p.Chain)
		}
	}
	var h struct {
		Durations []struct {
			Name            string
			Calls, Attempts int
			CallMean        float64 `json:"call_mean_seconds"`
		}
	}
	if err := json.Unmarshal(v.Health, &h); err != nil {
		t.Fatal(err)
	}
	found = false
	for _, d := range h.Durations {
		if d.Name == "payments" {
			found = true
			if d.Calls != 6 || d.Attempts <= d.Calls || d.CallMean <= 0 {
				t.Errorf("health durations of payments: %+v, want 6 calls, more attempts (retries), a mean", d)
			}
		}
	}
	if !found {
		t.Errorf("no durations of payments in the health check: %s", v.Health)
	}
}

// otelCount is the count of the histogram inst's points of policy name.
func otelCount(rm metricdata.ResourceMetrics, inst, name string) uint64 {
	var n uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			h, ok := m.Data.(metricdata.Histogram[float64])
			if m.Name != inst || !ok {
				continue
			}
			for _, p := range h.DataPoints {
				if v, _ := p.Attributes.Value(attribute.Key("resilience.policy.name")); v.AsString() == name {
					n += p.Count
				}
			}
		}
	}
	return n
}
