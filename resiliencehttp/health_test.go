package resiliencehttp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/resiliencehttp"
	"github.com/f0b5b96b/resilience/telemetry"
)

// probe asks srv's health check once, over the loopback network, and
// returns the status code and the decoded body (nil when there is none).
func probe(t *testing.T, srv *httptest.Server, method string) (int, http.Header, any) {
	t.Helper()
	req, err := http.NewRequestWithContext(bounded(t), method, srv.URL+"/healthz", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s /healthz: %v", method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s /healthz: reading the body: %v", method, err)
	}
	if len(data) == 0 || resp.Header.Get("Content-Type") != "application/json" {
		return resp.StatusCode, resp.Header, nil
	}
	var body any
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatalf("%s /healthz: body %q is not JSON: %v", method, data, err)
	}
	return resp.StatusCode, resp.Header, body
}

// wantProbe checks one GET of the health check against the status code
// and the body (as JSON text) it must answer.
func wantProbe(t *testing.T, what string, srv *httptest.Server, wantCode int, wantBody string) {
	t.Helper()
	code, h, body := probe(t, srv, http.MethodGet)
	if code != wantCode {
		t.Errorf("%s: status %d, want %d", what, code, wantCode)
	}
	if got := h.Get("Cache-Control"); got != "no-store" {
		t.Errorf("%s: Cache-Control %q, want no-store", what, got)
	}
	var want any
	if err := json.Unmarshal([]byte(wantBody), &want); err != nil {
		t.Fatalf("%s: the test's want body is not JSON: %v", what, err)
	}
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("%s: body mismatch (-want +got):\n%s", what, diff)
	}
}

func serveHealth(t *testing.T, h http.Handler) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle("/healthz", h)
	srv := httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return srv
}

// breakerValues is the "values" of a breaker of generation gen without
// calls in its state, refused of them refused, open for openFor seconds
// with left seconds of cooldown left (0, 0 if not open).
func breakerValues(gen, refused int, openFor, left float64) string {
	return fmt.Sprintf(`{"open_for": %g, "cooldown_left": %g, "window_calls": 0, "window_failures": 0, "failure_ratio": 0, "window_refused": %d, "window_successes": 0,
		"window_slow": 0, "consecutive_failures": 0, "consecutive_successes": 0, "generation": %d, "forced": 0}`, openFor, left, refused, gen)
}

// A critical breaker that opens turns the answer to 503; half-open is
// healthy again (its trials need traffic); closed stays healthy. A
// breaker that is not critical never changes the answer.
func TestHealthCriticalBreakerOpenThenRecovers(t *testing.T) {
	clk := clock.NewFake()
	payments := breaker.New(breaker.WithName("payments"), breaker.WithClock(clk),
		breaker.WithThreshold(2), breaker.WithCooldown(time.Second))
	search := breaker.New(breaker.WithName("search"), breaker.WithClock(clk), breaker.WithThreshold(1))
	reg := telemetry.NewRegistry()
	for _, b := range []*breaker.Breaker{payments, search} {
		if err := reg.Register(b); err != nil {
			t.Fatal(err)
		}
	}
	srv := serveHealth(t, resiliencehttp.Health(reg, resiliencehttp.WithCritical("payments")))
	guards := func(payments, search string) string {
		return `[` + payments + `, {"kind": "breaker", "name": "search", "refused": 0, ` + search + `}]`
	}
	closed := func(gen int) string {
		return `"state": "closed", "values": ` + breakerValues(gen, 0, 0, 0)
	}
	searchClosed := closed(1)
	wantProbe(t, "all closed", srv, 200, `{"status": "ok", "guards": `+guards(
		`{"kind": "breaker", "name": "payments", "refused": 0, "critical": true, `+closed(1)+`}`, searchClosed)+`}`)

	// A breaker that is not critical opens: still 200.
	search.Record(true)
	searchOpen := `"state": "open", "values": ` + breakerValues(2, 0, 0, 30)
	wantProbe(t, "search open", srv, 200, `{"status": "ok", "guards": `+guards(
		`{"kind": "breaker", "name": "payments", "refused": 0, "critical": true, `+closed(1)+`}`, searchOpen)+`}`)

	// The critical one opens: 503, named under "open".
	payments.Record(true)
	payments.Record(true)
	if _, err := payments.Allow(); !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("Allow = %v, want ErrOpen", err)
	}
	wantProbe(t, "payments open", srv, 503, `{"status": "unavailable", "open": ["payments"], "guards": `+guards(
		`{"kind": "breaker", "name": "payments", "refused": 1, "critical": true, "state": "open", "values": `+breakerValues(2, 1, 0, 1)+`}`,
		searchOpen)+`}`)

	// The cooldown ends: half-open, healthy, so trials can come.
	clk.Advance(time.Second)
	searchOpen = `"state": "open", "values": ` + breakerValues(2, 0, 1, 29)
	code, _, _ := probe(t, srv, http.MethodGet)
	if code != 200 {
		t.Errorf("half-open: status %d, want 200", code)
	}
	if got := payments.State(); got != breaker.HalfOpen {
		t.Fatalf("payments is %v after the cooldown, want half-open", got)
	}
	// A trial succeeds: closed, healthy.
	p, err := payments.Allow()
	if err != nil {
		t.Fatalf("trial refused: %v", err)
	}
	p.Done(nil)
	wantProbe(t, "payments closed again", srv, 200, `{"status": "ok", "guards": `+guards(
		`{"kind": "breaker", "name": "payments", "refused": 1, "critical": true, `+closed(4)+`}`, searchOpen)+`}`)

	// Forced open is open.
	payments.ForceOpen()
	if code, _, _ := probe(t, srv, http.MethodGet); code != 503 {
		t.Errorf("forced open: status %d, want 503", code)
	}
}

// By default no breaker is critical: every breaker open still answers
// 200, with their states in the body.
func TestHealthDefaultNothingCritical(t *testing.T) {
	b := breaker.New(breaker.WithName("payments"), breaker.WithThreshold(1), breaker.WithClock(clock.NewFake()))
	reg := telemetry.NewRegistry()
	if err := reg.Register(b); err != nil {
		t.Fatal(err)
	}
	b.Record(true)
	srv := serveHealth(t, resiliencehttp.Health(reg))
	wantProbe(t, "open, not critical", srv, 200, `{"status": "ok", "guards": [{"kind": "breaker", "name": "payments", "refused": 0, "state": "open",
		"values": `+breakerValues(2, 0, 0, 30)+`}]}`)
}

// A critical name that is not registered is unhealthy, named under
// "missing"; registering it later makes the next answer healthy.
func TestHealthMissingCritical(t *testing.T) {
	reg := telemetry.NewRegistry()
	srv := serveHealth(t, resiliencehttp.Health(reg, resiliencehttp.WithCritical("ledger"), resiliencehttp.WithCritical("ledger")))
	wantProbe(t, "empty registry", srv, 503, `{"status": "unavailable", "missing": ["ledger"], "guards": []}`)
	if err := reg.Register(breaker.New(breaker.WithName("ledger"))); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := probe(t, srv, http.MethodGet); code != 200 {
		t.Errorf("ledger registered: status %d, want 200", code)
	}
}

// guardOf is a guard of any kind with a fixed snapshot.
type guardOf struct{ s telemetry.Snapshot }

func (g guardOf) Name() string                 { return g.s.Name }
func (g guardOf) Snapshot() telemetry.Snapshot { return g.s }

// Health renders any guard from what it describes, and a guard of one's
// own with states counts as a breaker does: critical and open is 503.
func TestHealthOtherGuards(t *testing.T) {
	reg := telemetry.NewRegistry()
	keys := &telemetry.KeySummary{Keys: 2, MaxKeys: 10, Open: 1, Top: []telemetry.KeyStat{{Key: "u1", State: "open", Refused: 7}}}
	for _, g := range []guardOf{
		{telemetry.Snapshot{Kind: bulkhead.Kind, Name: "db", Refused: 3, Values: []telemetry.Value{
			{Name: "limit", Value: 10}, {Name: "in_flight", Value: 2}}}},
		{telemetry.Snapshot{Kind: "mycache", Name: "cache", State: telemetry.StateOpen, Refused: 5}},
		{telemetry.Snapshot{Kind: breaker.Kind, Name: "users", Refused: 7, Keys: keys}},
	} {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	// db has no states: it cannot be open, so a check of it sees nothing.
	srv := serveHealth(t, resiliencehttp.Health(reg, resiliencehttp.WithCritical("db", "cache")))
	wantProbe(t, "bulkhead, own kind, keyed", srv, 503, `{"status": "unavailable", "open": ["cache"], "missing": ["db"], "guards": [
		{"kind": "mycache", "name": "cache", "refused": 5, "state": "open", "critical": true},
		{"kind": "bulkhead", "name": "db", "refused": 3, "values": {"limit": 10, "in_flight": 2}},
		{"kind": "breaker", "name": "users", "refused": 7,
		 "keys": {"keys": 2, "max_keys": 10, "open": 1, "top": [{"key": "u1", "state": "open", "refused": 7}]}}]}`)
}

func TestHealthMethods(t *testing.T) {
	reg := telemetry.NewRegistry()
	srv := serveHealth(t, resiliencehttp.Health(reg, resiliencehttp.WithCritical("payments")))
	code, h, body := probe(t, srv, http.MethodHead)
	if code != 503 || body != nil || h.Get("Content-Type") != "application/json" {
		t.Errorf("HEAD: status %d, Content-Type %q, body %v; want 503, application/json, none", code, h.Get("Content-Type"), body)
	}
	code, h, _ = probe(t, srv, http.MethodPost)
	if code != http.StatusMethodNotAllowed || h.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: status %d, Allow %q; want 405, \"GET, HEAD\"", code, h.Get("Allow"))
	}
}

func TestHealthPanics(t *testing.T) {
	for want, f := range map[string]func(){
		"resiliencehttp: Health registry must not be nil":     func() { resiliencehttp.Health(nil) },
		"resiliencehttp: Health option must not be nil":       func() { resiliencehttp.Health(telemetry.NewRegistry(), nil) },
		"resiliencehttp: WithCritical name must not be empty": func() { resiliencehttp.WithCritical("a", "") },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), want) {
					t.Errorf("panic %v, want %q", r, want)
				}
			}()
			f()
		}()
	}
}

// A value JSON cannot spell makes the answer 500, naming the value, not a
// body that lies.
func TestHealthValueNotANumber(t *testing.T) {
	reg := telemetry.NewRegistry()
	if err := reg.Register(guardOf{telemetry.Snapshot{Kind: "mine", Name: "x", Values: []telemetry.Value{{Name: "ratio", Value: math.NaN()}}}}); err != nil {
		t.Fatal(err)
	}
	srv := serveHealth(t, resiliencehttp.Health(reg))
	resp, err := srv.Client().Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "value ratio") {
		t.Errorf("status %d, body %q; want 500 naming the value ratio", resp.StatusCode, body)
	}
}

// A guard's Reason, why it is in its state, is in the answer beside the
// state.
func TestHealthReason(t *testing.T) {
	reg := telemetry.NewRegistry()
	g := guardOf{telemetry.Snapshot{Kind: "fleetlimit", Name: "api", State: "local", Reason: "dial tcp: connection refused"}}
	if err := reg.Register(g); err != nil {
		t.Fatal(err)
	}
	srv := serveHealth(t, resiliencehttp.Health(reg))
	wantProbe(t, "a guard with a reason", srv, 200, `{"status": "ok", "guards": [
		{"kind": "fleetlimit", "name": "api", "refused": 0, "state": "local", "reason": "dial tcp: connection refused"}]}`)
}
