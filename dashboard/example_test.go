package dashboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/dashboard"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

// A dashboard of one breaker and one pipeline, mounted under
// /dashboard/. The registry is the policies' one observer: the dashboard,
// which observes it, gets the retry's attempts (calls per second, errors,
// latency) and retries with no layer of its own in the chain. Here it is
// read as one snapshot, at snapshot.json; a browser opens /dashboard/ and
// follows the stream at /dashboard/events.
func ExampleNew() {
	reg := telemetry.NewRegistry()
	fake := clock.NewFake() // for a reproducible output; leave Clock nil in a service
	dash := dashboard.New(reg, &dashboard.Options{Clock: fake})

	prices := breaker.New(breaker.WithName("prices"), breaker.WithObserver(reg), breaker.WithClock(fake))
	pipeline := resilience.Then(
		retry.New[string](retry.WithName("prices"), retry.WithObserver(reg), retry.WithClock(fake)),
		breaker.Policy[string](prices),
	)
	if err := errors.Join(reg.Register(prices), reg.RegisterPipeline("prices", pipeline)); err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/dashboard/", dash)

	get := func() {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", "/dashboard/snapshot.json", nil))
		var s struct {
			Version int
			Guards  []struct {
				Name  string
				State string   // the worst state of the name's guards
				Calls *float64 `json:"callsPerSec"`
			}
			Pipelines []struct {
				Chain   string
				Retries *float64 `json:"retriesPerSec"`
			}
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil {
			fmt.Println(err)
			return
		}
		g, p := s.Guards[0], s.Pipelines[0]
		fmt.Printf("v%d %s: %s, %s calls/s | %s: %s retries/s\n", s.Version, g.Name, g.State, show(g.Calls), p.Chain, show(p.Retries))
	}
	get() // the first snapshot: no rates yet
	fake.Advance(time.Second)
	for range 20 {
		_, _ = pipeline.Do(context.Background(), func(context.Context) (string, error) { return "42.00", nil })
	}
	get()
	// Output:
	// v2 prices: closed, – calls/s | retry(prices) > breaker(prices): – retries/s
	// v2 prices: closed, 20 calls/s | retry(prices) > breaker(prices): 0 retries/s
}

func show(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprint(*v)
}

// Measure gives a tile its calls per second, error % and latency
// percentiles where no retry's attempt durations do (a chain without a
// retry). Put it just outside the guard, inside the retry if there is
// one, to see every attempt as the guard sees it.
func ExampleMeasure() {
	reg := telemetry.NewRegistry()
	fake := clock.NewFake()
	dash := dashboard.New(reg, &dashboard.Options{Clock: fake})
	db := dashboard.Measure[int](dash, "db")
	fmt.Println(db)

	read := func() {
		rec := httptest.NewRecorder()
		dash.ServeHTTP(rec, httptest.NewRequest("GET", "/snapshot.json", nil))
		var s struct {
			Guards []struct {
				Name      string
				ErrorPct  *float64 `json:"errorPct"`
				LatencyMs *struct{ P50, P99 float64 }
			}
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &s)
		g := s.Guards[0]
		fmt.Printf("%s: %v%% errors, p50 %v ms, p99 %v ms\n", g.Name, *g.ErrorPct, g.LatencyMs.P50, g.LatencyMs.P99)
	}
	for i := range 100 {
		_, _ = db.Do(context.Background(), func(context.Context) (int, error) {
			took := 2 * time.Millisecond
			if i%10 == 0 {
				took = 300 * time.Millisecond // one call in ten is slow, and fails
				fake.Advance(took)
				return 0, errors.New("timeout")
			}
			fake.Advance(took)
			return 1, nil
		})
	}
	read()
	// Output:
	// measure(db)
	// db: 10% errors, p50 2.03 ms, p99 285 ms
}
