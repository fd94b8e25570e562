// Command allguards builds one guard of every kind, registers them all in
// one telemetry.Registry, makes a few calls through each, and checks that
// every consumer of the registry shows every one of them by name: the
// Prometheus scrape (resilienceprom), the OpenTelemetry reader
// (resilienceotel), the dashboard's JSON (package dashboard) and the
// health check (resiliencehttp.Health). The registry is the policies' one
// observer: the exporters, the dashboard and the health check observe it,
// so the retry's durations reach all four with no layer of theirs in the
// chain.
//
// The guards: a breaker, a breaker.Keyed, a bulkhead, a
// ratelimit.Limiter, a ratelimit.Keyed, an adaptive limiter, a throttler,
// a chaos injector, a cache, resilienceredis's fleet-wide limiter, keyed
// limiter and breaker (on the redis-server at -redis), the bulkhead that
// guards an HTTP server (resiliencehttp.Middleware) and the adaptive
// limiter that guards a gRPC server (resiliencegrpc's interceptor), both
// servers on 127.0.0.1.
//
//	go run . -redis 127.0.0.1:6379
//
// It prints, for each guard, which consumers show it, and exits 1 if one
// does not.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/dashboard"
	"github.com/f0b5b96b/resilience/policy/adaptive"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/cache"
	"github.com/f0b5b96b/resilience/policy/chaos"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/throttle"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"github.com/f0b5b96b/resilience/resiliencehttp"
	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/resilienceprom"
	"github.com/f0b5b96b/resilience/resilienceredis"
	"github.com/f0b5b96b/resilience/telemetry"
)

func main() {
	addr := flag.String("redis", "127.0.0.1:6379", "the redis-server of the fleet-wide guards")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	v, err := Run(ctx, *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "allguards:", err)
		os.Exit(1)
	}
	if missing := v.Report(os.Stdout); missing > 0 {
		fmt.Fprintf(os.Stderr, "allguards: %d guards missing from a consumer\n", missing)
		os.Exit(1)
	}
}

// Guard is a registered guard: its kind and name.
type Guard struct {
	Kind telemetry.Kind
	Name string
}

// Views is what each consumer of the registry showed after the calls.
type Views struct {
	Guards    []Guard                    // every guard registered, in registration order
	Pipeline  string                     // the name of the pipeline whose retry reports durations
	Chain     string                     // its chain, as the dashboard shows it
	Scrape    string                     // the Prometheus scrape of /metrics
	OTel      metricdata.ResourceMetrics // what the OpenTelemetry reader collected
	Dashboard []byte                     // the dashboard's snapshot.json
	Health    []byte                     // the health check's body
}

// Run builds the guards on the redis-server at redisAddr, registers them,
// calls through each, and returns what each consumer shows.
func Run(ctx context.Context, redisAddr string) (*Views, error) {
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("redis at %s: %w", redisAddr, err)
	}
	reg := telemetry.NewRegistry()
	obs := reg // every policy's one observer

	payments := breaker.New(breaker.WithName("payments"), breaker.WithObserver(obs))
	hosts := breaker.NewKeyed[string](breaker.WithName("hosts"), breaker.WithObserver(obs))
	db := bulkhead.New(4, bulkhead.WithName("db"), bulkhead.WithObserver(obs))
	api := ratelimit.New(1000, 100, ratelimit.WithName("api"), ratelimit.WithObserver(obs))
	tenants := ratelimit.NewKeyed[string](1000, 100, ratelimit.WithName("tenants"), ratelimit.WithObserver(obs))
	search := adaptive.New(adaptive.WithName("search"), adaptive.WithObserver(obs))
	backend := throttle.New(throttle.WithName("backend"), throttle.WithObserver(obs))
	faults := chaos.NewInjector(0, chaos.WithName("faults"), chaos.WithObserver(obs))
	prices := cache.New[string](time.Minute, cache.WithName("prices"), cache.WithObserver(obs))
	prefix := resilienceredis.WithPrefix(fmt.Sprintf("allguards:%d:", time.Now().UnixNano()))
	fleetAPI := resilienceredis.NewLimiter(rdb, "fleet-api", 1000, 100, prefix, resilienceredis.WithObserver(obs))
	fleetTenants := resilienceredis.NewKeyedLimiter(rdb, "fleet-tenants", 1000, 100, prefix, resilienceredis.WithObserver(obs))
	fleetPayments := resilienceredis.NewBreaker(rdb, "fleet-payments", prefix, resilienceredis.WithObserver(obs))
	defer fleetPayments.Close()
	httpServer := bulkhead.New(8, bulkhead.WithName("http-server"), bulkhead.WithObserver(obs))
	grpcServer := adaptive.New(adaptive.WithName("grpc-server"), adaptive.WithObserver(obs))

	guards := []telemetry.Guard{payments, hosts, db, api, tenants, search, backend, faults, prices,
		fleetAPI, fleetTenants, fleetPayments, httpServer, grpcServer}
	v := &Views{Pipeline: "payments"}
	for _, g := range guards {
		if err := reg.Register(g); err != nil {
			return nil, err
		}
		v.Guards = append(v.Guards, Guard{g.Snapshot().Kind, g.Name()})
	}

	// The consumers, made after the guards are registered (so the
	// exporters describe every guard's values from the start).
	promReg := prometheus.NewRegistry()
	if _, err := resilienceprom.New(promReg, resilienceprom.WithRegistry(reg)); err != nil {
		return nil, err
	}
	reader := sdkmetric.NewManualReader()
	metrics, err := resilienceotel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), resilienceotel.WithRegistry(reg))
	if err != nil {
		return nil, err
	}
	defer metrics.Close()
	dash := dashboard.New(reg, nil)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(promReg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	mux.Handle("/dashboard/", dash)
	mux.Handle("/health", resiliencehttp.Health(reg))
	// The HTTP server guarded by the http-server bulkhead.
	mux.Handle("/hello", resiliencehttp.Middleware(bulkhead.Policy[struct{}](httpServer), resiliencehttp.WithObserver(obs))(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "hello") })))
	srv := httptest.NewServer(mux) // on 127.0.0.1
	defer srv.Close()

	// The gRPC server guarded by the grpc-server limiter.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	gs := grpc.NewServer(grpc.UnaryInterceptor(resiliencegrpc.UnaryServerInterceptor(adaptive.Policy[struct{}](grpcServer), resiliencegrpc.WithObserver(obs))))
	healthpb.RegisterHealthServer(gs, health.NewServer())
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()

	// The calls: a pipeline whose retry reports each call's and attempt's
	// duration, and a few calls through every other guard.
	pipeline := resilience.Then(
		retry.New[string](retry.WithName("payments"), retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(time.Millisecond)), retry.WithObserver(obs)),
		breaker.Policy[string](payments),
		bulkhead.Policy[string](db),
	)
	if err := reg.RegisterPipeline("payments", pipeline); err != nil {
		return nil, err
	}
	v.Chain = pipeline.String()
	n := 0
	flaky := func(context.Context) (string, error) { // every third attempt fails
		if n++; n%3 == 0 {
			return "", errors.New("payments: 503")
		}
		time.Sleep(time.Millisecond)
		return "ok", nil
	}
	ok := func(context.Context) (string, error) { return "ok", nil }
	hostOf := func(context.Context) string { return "a.example" }
	layers := []resilience.Policy[string]{
		breaker.KeyedPolicy[string](hosts, hostOf),
		ratelimit.Policy[string](api),
		resilience.New("tenants", func(ctx context.Context, next resilience.Next[string]) (string, error) {
			if !tenants.Allow("acme") {
				return "", ratelimit.ErrLimited
			}
			return next.Call(ctx)
		}),
		adaptive.Policy[string](search),
		throttle.Policy[string](backend),
		chaos.Fault[string](faults, func(context.Context) error { return errors.New("injected") }),
		prices.Policy(),
		resilienceredis.LimiterPolicy[string](fleetAPI),
		resilience.New("fleet-tenants", func(ctx context.Context, next resilience.Next[string]) (string, error) {
			if !fleetTenants.Allow(ctx, "acme") {
				return "", ratelimit.ErrLimited
			}
			return next.Call(ctx)
		}),
		resilienceredis.BreakerPolicy[string](fleetPayments),
	}
	keyed := cache.Key(ctx, "eur")
	for range 6 {
		_, _ = pipeline.Do(ctx, flaky)
		for _, p := range layers {
			if _, err := p.Do(keyed, ok); err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
		}
	}
	client := srv.Client()
	for range 3 {
		if err := get(ctx, client, srv.URL+"/hello", nil); err != nil {
			return nil, err
		}
	}
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	for range 3 {
		if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
			return nil, fmt.Errorf("grpc: %w", err)
		}
	}

	// What each consumer shows.
	var scrape []byte
	if err := get(ctx, client, srv.URL+"/metrics", &scrape); err != nil {
		return nil, err
	}
	v.Scrape = string(scrape)
	if err := reader.Collect(ctx, &v.OTel); err != nil {
		return nil, err
	}
	if err := get(ctx, client, srv.URL+"/dashboard/snapshot.json", &v.Dashboard); err != nil {
		return nil, err
	}
	if err := get(ctx, client, srv.URL+"/health", &v.Health); err != nil {
		return nil, err
	}
	return v, nil
}

// get fetches url, into body if not nil; a status other than 200 is an
// error.
func get(ctx context.Context, c *http.Client, url string, body *[]byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	if body != nil {
		*body = b
	}
	return nil
}

// InScrape reports whether the scrape has g's refusals counter, labelled
// with its kind and name.
func (v *Views) InScrape(g Guard) bool {
	return strings.Contains(v.Scrape, fmt.Sprintf("resilience_guard_refused_total{name=%q,policy=%q} ", g.Name, g.Kind))
}

// InOTel reports whether the reader has a point of resilience.guard.refused
// with g's kind and name.
func (v *Views) InOTel(g Guard) bool {
	for _, sm := range v.OTel.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "resilience.guard.refused" {
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, p := range sum.DataPoints {
				name, _ := p.Attributes.Value(attribute.Key("resilience.policy.name"))
				kind, _ := p.Attributes.Value(attribute.Key("resilience.policy.type"))
				if name.AsString() == g.Name && kind.AsString() == string(g.Kind) {
					return true
				}
			}
		}
	}
	return false
}

// InDashboard reports whether the dashboard's JSON has a tile named g's
// name with a guard of g's kind.
func (v *Views) InDashboard(g Guard) bool {
	var s struct {
		Guards []struct {
			Name   string
			Guards []struct{ Kind string }
		}
	}
	if json.Unmarshal(v.Dashboard, &s) != nil {
		return false
	}
	for _, t := range s.Guards {
		for _, k := range t.Guards {
			if t.Name == g.Name && k.Kind == string(g.Kind) {
				return true
			}
		}
	}
	return false
}

// InHealth reports whether the health check's body lists g.
func (v *Views) InHealth(g Guard) bool {
	var h struct {
		Guards []struct{ Kind, Name string }
	}
	if json.Unmarshal(v.Health, &h) != nil {
		return false
	}
	for _, e := range h.Guards {
		if e.Name == g.Name && e.Kind == string(g.Kind) {
			return true
		}
	}
	return false
}

// Report writes a line per guard, with the consumers that show it, and
// returns how many (guard, consumer) pairs are missing.
func (v *Views) Report(w io.Writer) int {
	missing := 0
	mark := func(ok bool) string {
		if ok {
			return "yes"
		}
		missing++
		return "NO"
	}
	fmt.Fprintf(w, "%-10s %-15s %-10s %-6s %-10s %s\n", "kind", "name", "prometheus", "otel", "dashboard", "health")
	for _, g := range v.Guards {
		fmt.Fprintf(w, "%-10s %-15s %-10s %-6s %-10s %s\n", g.Kind, g.Name, mark(v.InScrape(g)), mark(v.InOTel(g)), mark(v.InDashboard(g)), mark(v.InHealth(g)))
	}
	fmt.Fprintf(w, "pipeline %s: %s\n", v.Pipeline, v.Chain)
	return missing
}
