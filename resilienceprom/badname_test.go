package resilienceprom_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceprom"
	"github.com/f0b5b96b/resilience/telemetry"
)

// A name that is not valid UTF-8 (from a guard of one's own, which no
// WithName checked) loses no scrape: the series is reported with its
// invalid bytes replaced by U+FFFD, the self-metric counts it, and the
// rest of the process's metrics, the Go runtime's too, are served.
func TestScrapeWithInvalidUTF8Name(t *testing.T) {
	c := newCollector(t)
	for _, name := range []string{"db\xff", "db\xfe", "ok"} { // the first two read alike once sanitised
		c.Observe(telemetry.Event{Type: breaker.EventFailure, Name: name})
	}
	m := resilienceprom.Measure[int](c, "fine", 1) // a series of a valid name
	_, _ = m.Call.Do(t.Context(), func(context.Context) (int, error) { return 1, nil })

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collectors.NewGoCollector(), c)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s\n%s", resp.Status, body)
	}
	for _, want := range []string{
		"go_goroutines ",
		`resilience_events_total{event="breaker.failure",name="db` + "\uFFFD" + `",policy="breaker"} 1`,
		`resilience_events_total{event="breaker.failure",name="ok",policy="breaker"} 1`,
		`resilience_calls_total{name="fine",outcome="success",policy="pipeline"} 1`,
		"resilience_exporter_sanitized_series 2", // db\xff's events and calls series
		"resilience_exporter_dropped_series 2",   // db\xfe's events and calls: they read as db\xff's
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the scrape lacks %q:\n%s", want, body)
		}
	}
}

// Measure rejects a name that is not valid UTF-8, naming itself.
func TestMeasureRejectsInvalidUTF8Name(t *testing.T) {
	c := newCollector(t)
	got := func() (msg any) {
		defer func() { msg = recover() }()
		resilienceprom.Measure[int](c, "db\xff", 1)
		return nil
	}()
	if want := `resilienceprom: Measure("db\xff"): name must be valid UTF-8`; got != want {
		t.Errorf("panic %v, want %q", got, want)
	}
}
