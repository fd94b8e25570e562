package resiliencehttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resiliencehttp"
	"github.com/f0b5b96b/resilience/telemetry"
)

func ExampleHealth() {
	clk := clock.NewFake() // production code leaves the clock out
	payments := breaker.New(breaker.WithName("payments"), breaker.WithThreshold(1),
		breaker.WithCooldown(time.Second), breaker.WithClock(clk))
	reg := telemetry.NewRegistry()
	if err := reg.Register(payments); err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/healthz", resiliencehttp.Health(reg, resiliencehttp.WithCritical("payments")))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	probe := func() {
		resp, err := http.Get(srv.URL + "/healthz")
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		fmt.Printf("%d %s", resp.StatusCode, body)
	}
	probe()
	payments.Record(true) // the dependency fails: the breaker opens
	probe()
	clk.Advance(time.Second) // half-open: healthy, so trials can come
	probe()
	// Output:
	// 200 {"status":"ok","guards":[{"kind":"breaker","name":"payments","refused":0,"state":"closed","critical":true,"values":{"open_for":0,"cooldown_left":0,"window_calls":0,"window_failures":0,"failure_ratio":0,"window_refused":0,"window_successes":0,"window_slow":0,"consecutive_failures":0,"consecutive_successes":0,"generation":1,"forced":0}}]}
	// 503 {"status":"unavailable","open":["payments"],"guards":[{"kind":"breaker","name":"payments","refused":0,"state":"open","critical":true,"values":{"open_for":0,"cooldown_left":1,"window_calls":0,"window_failures":0,"failure_ratio":0,"window_refused":0,"window_successes":0,"window_slow":0,"consecutive_failures":0,"consecutive_successes":0,"generation":2,"forced":0}}]}
	// 200 {"status":"ok","guards":[{"kind":"breaker","name":"payments","refused":0,"state":"half-open","critical":true,"values":{"open_for":0,"cooldown_left":0,"window_calls":0,"window_failures":0,"failure_ratio":0,"window_refused":0,"window_successes":0,"window_slow":0,"consecutive_failures":0,"consecutive_successes":0,"generation":3,"forced":0}}]}
}
