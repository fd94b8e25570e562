// Command fleet runs three instances of a service that share one breaker
// and one rate limit through Redis, against a loopback HTTP server, and
// shows that the fleet trips at the configured threshold (not three times
// it) and that the limit holds for the fleet as a whole.
//
// It uses the server at RESILIENCE_REDIS_ADDR, or starts its own
// redis-server (on a free loopback port, in a temporary directory) when
// that is unset.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceredis"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/redis/go-redis/v9"
)

const (
	instances = 3
	threshold = 5  // consecutive failures, fleet-wide
	rate      = 50 // requests per second, fleet-wide
	burst     = 10 // requests at once, fleet-wide
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func run() error {
	redis.SetLogger(quiet{}) // the client's log of connections it drops
	addr := os.Getenv(redistest.EnvAddr)
	if addr == "" {
		dir, err := os.MkdirTemp("", "fleet")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		s, err := redistest.StartProcess(dir)
		if err != nil {
			return fmt.Errorf("%w (%s)", err, redistest.Install)
		}
		defer s.Stop()
		addr = s.Addr
		fmt.Println("started redis-server on", addr)
	}
	prefix := "fleet-example:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"

	// The dependency: /ok answers, /fail is down.
	var okCalls, failCalls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			failCalls.Add(1)
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		okCalls.Add(1)
	}))
	defer srv.Close()

	// Three instances, each with its own Redis client, breaker and limiter
	// objects: what they share is in Redis.
	type instance struct {
		get func(ctx context.Context, path string) (int, error)
		br  *resilienceredis.Breaker
	}
	var fleet []instance
	for range instances {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		defer rdb.Close()
		br := resilienceredis.NewBreaker(rdb, "dependency", resilienceredis.WithPrefix(prefix),
			resilienceredis.WithThreshold(threshold), resilienceredis.WithCooldown(time.Minute),
			resilienceredis.WithFlushInterval(10*time.Millisecond))
		defer br.Close()
		// A second to answer, not the default 50ms: the burst below opens
		// 20 connections per instance at once, on a small machine.
		lim := resilienceredis.NewLimiter(rdb, "dependency", rate, burst, resilienceredis.WithPrefix(prefix),
			resilienceredis.WithTimeout(time.Second))
		policy := resilience.Then(resilienceredis.BreakerPolicy[int](br), resilienceredis.LimiterPolicy[int](lim))
		get := func(ctx context.Context, path string) (int, error) {
			return policy.Do(ctx, func(ctx context.Context) (int, error) {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return 0, err
				}
				resp.Body.Close()
				if resp.StatusCode >= 500 {
					return resp.StatusCode, errors.New(resp.Status)
				}
				return resp.StatusCode, nil
			})
		}
		fleet = append(fleet, instance{get, br})
	}
	ctx := context.Background()

	// 1. The rate limit: 20 requests from each instance, at once.
	start := time.Now()
	var admitted, limited atomic.Int64
	var wg sync.WaitGroup
	for _, in := range fleet {
		for range 20 {
			wg.Go(func() {
				_, err := in.get(ctx, "/ok")
				switch {
				case err == nil:
					admitted.Add(1)
				case errors.Is(err, resilience.ErrRefused):
					limited.Add(1)
				}
			})
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	bound := burst + int64(rate*elapsed.Seconds())
	fmt.Printf("rate limit %d/s, burst %d, shared: %d requests from %d instances in %v: %d admitted (at most %d: burst + rate × time), %d limited; %d reached the server\n",
		rate, burst, instances*20, instances, elapsed.Round(time.Millisecond), admitted.Load(), bound, limited.Load(), okCalls.Load())
	if admitted.Load() > bound {
		return fmt.Errorf("the fleet admitted %d requests, above the shared limit %d", admitted.Load(), bound)
	}

	// 2. The breaker: the instances call the failing endpoint in turn,
	// once the bucket has refilled.
	time.Sleep(burst * time.Second / rate)
	var opened time.Time
	for i := range 4 * threshold {
		_, err := fleet[i%instances].get(ctx, "/fail")
		if errors.Is(err, breaker.ErrOpen) {
			opened = time.Now()
			fmt.Printf("call %d (instance %d): refused: %v\n", i+1, i%instances, err)
			break
		}
		fmt.Printf("call %d (instance %d): %v\n", i+1, i%instances, err)
		time.Sleep(40 * time.Millisecond) // requests arrive 40ms apart
	}
	if opened.IsZero() {
		return errors.New("the fleet's breaker did not open")
	}
	fmt.Printf("the failing server got %d requests before the fleet's breaker opened: threshold %d, fleet-wide (%d instances with breakers of their own would have let %d through)\n",
		failCalls.Load(), threshold, instances, instances*threshold)
	for i, in := range fleet {
		fmt.Printf("instance %d: %v\n", i, in.br.State())
	}
	if failCalls.Load() >= 2*threshold {
		return fmt.Errorf("the fleet tripped only after %d failures, threshold %d", failCalls.Load(), threshold)
	}
	return nil
}
