package resiliencehttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resiliencehttp"
)

// hostsTransport answers 503 for the hosts in down, 200 for the others,
// and records the hosts it was asked for.
type hostsTransport struct {
	down map[string]bool
	mu   sync.Mutex
	sent []string
}

func (h *hostsTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.sent = append(h.sent, r.URL.Host)
	h.mu.Unlock()
	status := http.StatusOK
	if h.down[r.URL.Host] {
		status = http.StatusServiceUnavailable
	}
	return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
}

func TestHostBreakerCutsOffOnlyTheFailingHost(t *testing.T) {
	base := &hostsTransport{down: map[string]bool{"down.example:8080": true}}
	hosts := breaker.NewKeyed[string](breaker.WithName("upstream"), breaker.WithThreshold(2), breaker.WithClock(clock.NewFake()))
	c := &http.Client{Transport: &resiliencehttp.Transport{Base: base, Policy: resiliencehttp.HostBreaker(hosts)}}
	get := func(url string) (int, error) {
		resp, err := c.Get(url)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	for range 2 {
		if code, err := get("http://down.example:8080/x"); code != 503 || err != nil {
			t.Fatalf("GET down = %d, %v; want 503", code, err)
		}
	}
	_, err := get("http://down.example:8080/x")
	var re *resilience.RefusedError
	if !errors.Is(err, breaker.ErrOpen) || !errors.As(err, &re) || re.Name() != "upstream" {
		t.Fatalf("GET down after 2 failures = %v, want the breaker's refusal", err)
	}
	if code, err := get("http://up.example/y"); code != 200 || err != nil {
		t.Fatalf("GET up = %d, %v; want 200", code, err)
	}
	if diff := cmp.Diff([]string{"down.example:8080", "down.example:8080", "up.example"}, base.sent); diff != "" {
		t.Errorf("hosts sent mismatch (-want +got):\n%s", diff)
	}
	if s := hosts.Breaker("down.example:8080").Stats(); s.State != breaker.Open || s.Key != "down.example:8080" {
		t.Errorf("down's Stats() = %+v, want open, keyed by host", s)
	}
	if got := hosts.Len(); got != 2 {
		t.Errorf("Len() = %d, want 2 hosts", got)
	}
	if got := panicOf(func() { resiliencehttp.HostBreaker(nil) }); got != "resiliencehttp: HostBreaker Keyed must not be nil" {
		t.Errorf("HostBreaker(nil) panic = %q", got)
	}
}

// RequestHost says one host one way: in lower case, without the scheme's
// default port; a port that is not the default stays, and names are not
// resolved.
func TestRequestHostIsCanonical(t *testing.T) {
	got := map[string]string{}
	spy := resilience.New("spy", func(ctx context.Context, next resilience.Next[*http.Response]) (*http.Response, error) {
		got[resiliencehttp.Request(ctx).URL.String()] = resiliencehttp.RequestHost(ctx)
		return next.Call(ctx)
	})
	c := &http.Client{Transport: &resiliencehttp.Transport{Base: &hostsTransport{}, Policy: spy}}
	want := map[string]string{
		"http://API.Example.com/x":      "api.example.com",
		"http://api.example.com:80/x":   "api.example.com",
		"https://api.example.com:443/x": "api.example.com",
		"https://api.example.com:80/x":  "api.example.com:80",
		"http://api.example.com:443/x":  "api.example.com:443",
		"http://api.example.com:8080/x": "api.example.com:8080",
		"http://[::1]:80/x":             "[::1]",
		"http://localhost:8080/x":       "localhost:8080",
		"http://127.0.0.1:8080/x":       "127.0.0.1:8080",
	}
	for u := range want {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatalf("Get(%s) = %v", u, err)
		}
		resp.Body.Close()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RequestHost mismatch (-want +got):\n%s", diff)
	}
}

// The layers of Transport.Policy find the request in their context.
func TestRequestInTheLayersContext(t *testing.T) {
	var seen *http.Request
	var host string
	spy := resilience.New("spy", func(ctx context.Context, next resilience.Next[*http.Response]) (*http.Response, error) {
		seen, host = resiliencehttp.Request(ctx), resiliencehttp.RequestHost(ctx)
		return next.Call(ctx)
	})
	c := &http.Client{Transport: &resiliencehttp.Transport{Base: &hostsTransport{}, Policy: spy}}
	req, _ := http.NewRequest(http.MethodGet, "http://api.example/v1", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("Do = %v", err)
	}
	resp.Body.Close()
	if seen == nil || seen.URL.String() != "http://api.example/v1" || host != "api.example" {
		t.Fatalf("Request(ctx) = %v, RequestHost(ctx) = %q; want the request to api.example", seen, host)
	}
	if r, h := resiliencehttp.Request(context.Background()), resiliencehttp.RequestHost(context.Background()); r != nil || h != "" {
		t.Fatalf("outside a Transport: Request = %v, RequestHost = %q; want nil and empty", r, h)
	}
}

// panicOf returns the panic value of f as a string, "" if it did not panic.
func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg, _ = r.(string)
		}
	}()
	f()
	return ""
}
