// Package dashdemo is the scenario that examples/dashboard runs and that
// the dashboard's browser test drives: the outage of examples/httpclient
// (a price server that serves, fails with 500s, hangs, then recovers), in
// a loop, beside dependencies that stay healthy, each called at a steady
// rate through its own pipeline over real HTTP on 127.0.0.1, with a
// dashboard of them all.
//
// The dependencies, each a path on one local server and a pipeline of the
// same name:
//
//	prices           the outage, in a loop: healthy, failing, hanging, recovered
//	inventory        healthy, 2 to 8 ms
//	search           healthy but slow-tailed (10 to 40 ms, one call in 50 at 120 ms), 3 % of 500s
//	recommendations  its breaker forced open by hand: every call refused, the fallback answers
//
// It is internal: a scenario, not an API.
package dashdemo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/dashboard"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencehttp"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Config is the scenario's settings. A zero field means its default.
type Config struct {
	// Rate is the calls per second made to each dependency. 0 means 25.
	Rate float64
	// Phase is the length of each phase of the prices outage (healthy,
	// failing, hanging, recovered: a cycle is four phases). 0 means 5s.
	Phase time.Duration
	// Timeout bounds each attempt. 0 means 150ms.
	Timeout time.Duration
	// Cooldown is the breakers' first cooldown; it doubles while trials
	// fail, up to 4 times it. 0 means 500ms.
	Cooldown time.Duration
}

func (c Config) withDefaults() Config {
	if c.Rate == 0 {
		c.Rate = 25
	}
	if c.Phase == 0 {
		c.Phase = 5 * time.Second
	}
	if c.Timeout == 0 {
		c.Timeout = 150 * time.Millisecond
	}
	if c.Cooldown == 0 {
		c.Cooldown = 500 * time.Millisecond
	}
	return c
}

// Validate reports the first setting out of range.
func (c Config) Validate() error {
	switch {
	case c.Rate < 0 || c.Rate > 1000:
		return fmt.Errorf("dashdemo: Rate must be in [0, 1000], got %v", c.Rate)
	case c.Phase < 0 || (c.Phase > 0 && c.Phase < 500*time.Millisecond):
		return fmt.Errorf("dashdemo: Phase must be 0 or >= 500ms, got %v", c.Phase)
	case c.Timeout < 0:
		return fmt.Errorf("dashdemo: Timeout must be >= 0, got %v", c.Timeout)
	case c.Cooldown < 0:
		return fmt.Errorf("dashdemo: Cooldown must be >= 0, got %v", c.Cooldown)
	}
	return nil
}

// Phase is what the prices server does at a moment of the run.
type Phase int

// The phases of the outage, in the order they come.
const (
	Healthy Phase = iota
	Failing
	Hanging
	Recovered
)

func (p Phase) String() string {
	return [...]string{"healthy", "failing", "hanging", "recovered"}[p]
}

// Demo is the running scenario: its dependencies' server, their guards
// and pipelines in Registry, which is their one observer, their events
// counted in Counter (an observer of Registry), and Dashboard (another),
// an http.Handler to serve where one likes.
type Demo struct {
	Dashboard *dashboard.Dashboard
	Registry  *telemetry.Registry
	Counter   *telemetry.Counter

	cfg   Config
	phase atomic.Int32
	ln    net.Listener
	srv   *http.Server
	deps  []*dep
}

// dep is one dependency: its path and pipeline.
type dep struct {
	name   string
	client *http.Client
	url    string
}

// New starts the dependencies' server on a loopback port and builds the
// guards, pipelines and dashboard. Nothing is called until Run. It
// returns an error if c is invalid or no port can be had; Close stops the
// server.
func New(c Config) (*Demo, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c = c.withDefaults()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("dashdemo: %w", err)
	}
	d := &Demo{Registry: telemetry.NewRegistry(), Counter: telemetry.NewCounter(), cfg: c, ln: ln}
	d.Registry.AddObserver(d.Counter)
	d.Dashboard = dashboard.New(d.Registry, nil) // it observes the registry: no Measure layer
	d.srv = &http.Server{Handler: http.HandlerFunc(d.serve)}
	go d.srv.Serve(ln)

	for _, name := range []string{"prices", "inventory", "search", "recommendations"} {
		b := breaker.New(
			breaker.WithName(name),
			breaker.WithFailureRatio(0.5),
			breaker.WithWindowCalls(20),
			breaker.WithMinCalls(10),
			breaker.WithCooldownBackoff(backoff.Exponential(c.Cooldown, 2, 4*c.Cooldown)),
			breaker.WithObserver(d.Registry),
		)
		if name == "recommendations" {
			b.ForceOpen() // switched off by hand: the dashboard shows it forced
		}
		pipeline := resilience.Then(
			resilience.Fallback(func(ctx context.Context, err error) (*http.Response, error) {
				return cached(), nil
			}, resilience.WithFallbackName(name), resilience.WithFallbackObserver(d.Registry)),
			retry.New[*http.Response](
				retry.WithName(name),
				retry.WithAttempts(3),
				retry.WithMaxElapsed(400*time.Millisecond),
				retry.WithBackoff(backoff.Exponential(20*time.Millisecond, 2, 200*time.Millisecond).WithJitter(backoff.Full)),
				retry.WithObserver(d.Registry), // its retry.attempt events: the tile's calls and latency
			),
			breaker.Policy[*http.Response](b),
			timeout.New[*http.Response](c.Timeout),
		)
		if err := errors.Join(d.Registry.Register(b), d.Registry.RegisterPipeline(name, pipeline)); err != nil {
			d.Close()
			return nil, err
		}
		d.deps = append(d.deps, &dep{
			name:   name,
			client: &http.Client{Transport: &resiliencehttp.Transport{Policy: pipeline}},
			url:    "http://" + ln.Addr().String() + "/" + name,
		})
	}
	return d, nil
}

// Close stops the dependencies' server. Call it after Run has returned.
func (d *Demo) Close() {
	_ = d.srv.Close()
	for _, dp := range d.deps {
		dp.client.CloseIdleConnections()
	}
}

// Phase returns the phase the prices server is in.
func (d *Demo) Phase() Phase { return Phase(d.phase.Load()) }

// Run calls every dependency at the configured rate, each call on its own
// goroutine as a server's handlers would make them, and moves the prices
// server through its phases in a loop, calling onPhase (if not nil) as
// each phase starts, the first (Healthy) included. It returns when ctx is
// done and the calls in flight have ended.
func (d *Demo) Run(ctx context.Context, onPhase func(Phase)) {
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(time.Duration(float64(time.Second) / d.cfg.Rate))
	defer tick.Stop()
	phases := time.NewTicker(d.cfg.Phase)
	defer phases.Stop()
	d.phase.Store(int32(Healthy))
	if onPhase != nil {
		onPhase(Healthy)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-phases.C:
			p := (d.Phase() + 1) % 4
			d.phase.Store(int32(p))
			if onPhase != nil {
				onPhase(p)
			}
		case <-tick.C:
			for _, dp := range d.deps {
				wg.Add(1)
				go func() {
					defer wg.Done()
					dp.call(ctx)
				}()
			}
		}
	}
}

func (dp *dep) call(ctx context.Context) {
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, dp.url, nil)
	if err != nil {
		return
	}
	resp, err := dp.client.Do(req)
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
}

// serve is the dependencies' server.
func (d *Demo) serve(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/")
	delay := func(lo, hi time.Duration) {
		t := time.NewTimer(lo + rand.N(hi-lo+1))
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
		}
	}
	switch name {
	case "prices":
		switch d.Phase() {
		case Failing:
			delay(time.Millisecond, 3*time.Millisecond)
			http.Error(w, "database unavailable", http.StatusInternalServerError)
			return
		case Hanging:
			delay(d.cfg.Phase, d.cfg.Phase) // until the client gives up
			return
		}
		delay(2*time.Millisecond, 6*time.Millisecond)
	case "inventory":
		delay(2*time.Millisecond, 8*time.Millisecond)
	case "search":
		if rand.N(50) == 0 {
			delay(120*time.Millisecond, 125*time.Millisecond)
		} else {
			delay(10*time.Millisecond, 40*time.Millisecond)
		}
		if rand.N(100) < 3 {
			http.Error(w, "index shard unavailable", http.StatusInternalServerError)
			return
		}
	case "recommendations":
	default:
		http.NotFound(w, r)
		return
	}
	fmt.Fprint(w, "42.00")
}

// cached is the fallback: the last known answer, marked as such.
func cached() *http.Response {
	return &http.Response{
		StatusCode: http.StatusOK,
		Status:     "200 OK",
		Header:     http.Header{"X-From-Cache": {"1"}},
		Body:       io.NopCloser(strings.NewReader("41.50")),
	}
}
