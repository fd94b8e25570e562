package main

import (
	"fmt"
	"io"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/sim"
)

// 4. The order of the policies: fallback > retry > hedge > breaker >
// bulkhead / rate limiter > timeout. Each scenario runs a mistake of order
// and the recommended order on the same server and clients, and reports
// what the mistake costs: calls to the dependency, the callers' latency
// (p50, p99) and the share of calls that succeed.

// orderCase is one scenario of the order experiment: a scenario, the
// recommended pipeline and the mistake (and, for the hedge, a baseline),
// and the window of the run its table reports the dependency's calls in.
type orderCase struct {
	File, Title string
	Scenario    sim.Scenario
	Sets        []sim.PolicySet[int] // the recommended order first, then the mistake, then any baseline
	Window      [2]time.Duration     // the dependency's calls in this window get a column of their own
	WindowName  string
}

// orderCases are the scenarios of the order experiment.
func orderCases() []orderCase {
	return []orderCase{orderTimeout(), orderBreaker(), orderHedge()}
}

// orderTimeout is a timeout outside the retry. 20 clients call a server of
// 20ms, 5% of whose calls take 1 s more (a slow replica). With the
// timeout inside the retry (100ms per attempt), a slow attempt is cut
// short and retried; with a timeout of 250ms outside the retry, the slow
// first attempt uses up the time and the retries never run.
func orderTimeout() orderCase {
	s := sim.Scenario{
		Name:     "order-timeout",
		Seed:     1,
		Duration: 30 * time.Second,
		Bucket:   250 * time.Millisecond,
		Server:   sim.Server{Base: 20 * time.Millisecond, Noise: 2 * time.Millisecond, Slow: 0.05, SlowLatency: time.Second},
		Clients:  []sim.Clients{{N: 20, Think: 50 * time.Millisecond, Ramp: time.Second}},
	}
	retries := func(env *sim.Env) resilience.Policy[int] {
		return retry.New[int](retry.WithClock(env.Clock()), retry.WithAttempts(3),
			retry.WithBackoff(backoff.Exponential(10*time.Millisecond, 2, 100*time.Millisecond).WithJitter(backoff.Full).WithRand(env.Rand())))
	}
	return orderCase{
		File: "order-timeout.svg", Title: "Timeout outside retry: 5% of the calls take 1 s more",
		Scenario: s,
		Sets: []sim.PolicySet[int]{
			{Name: "retry (3) > timeout (100ms per attempt)", Build: func(env *sim.Env) resilience.Policy[int] {
				return resilience.Then(retries(env), timeout.New[int](100*time.Millisecond, timeout.WithClock(env.Clock())))
			}},
			{Name: "timeout (250ms) > retry (3)", Build: func(env *sim.Env) resilience.Policy[int] {
				return resilience.Then(timeout.New[int](250*time.Millisecond, timeout.WithClock(env.Clock())), retries(env))
			}},
		},
		Window: [2]time.Duration{0, s.Duration}, WindowName: "whole run",
	}
}

// The breaker scenario's outage.
const (
	orderOutageStart = 10 * time.Second
	orderOutageEnd   = 30 * time.Second
)

// orderBreaker is a breaker outside the retry. 20 clients call a server
// that is down from 10 s to 30 s. With the retry outside the breaker, the
// breaker counts every attempt, trips after 5 of them, and its refusals
// end the retry at once; with the breaker outside, it sees one failure per
// call, after 3 attempts each, trips 3 times later, and each trial is a
// whole retry sequence.
func orderBreaker() orderCase {
	s := sim.Scenario{
		Name:     "order-breaker",
		Seed:     1,
		Duration: 40 * time.Second,
		Bucket:   100 * time.Millisecond,
		Server:   sim.Server{Base: 20 * time.Millisecond, Noise: 2 * time.Millisecond, Outages: []sim.Outage{{Start: orderOutageStart, End: orderOutageEnd, Mode: sim.Down}}},
		Clients:  []sim.Clients{{N: 20, Think: 50 * time.Millisecond, Ramp: time.Second}},
	}
	retries := func(env *sim.Env) resilience.Policy[int] {
		return retry.New[int](retry.WithClock(env.Clock()), retry.WithAttempts(3),
			retry.WithBackoff(backoff.Exponential(10*time.Millisecond, 2, 100*time.Millisecond).WithJitter(backoff.Full).WithRand(env.Rand())))
	}
	brk := func(env *sim.Env) resilience.Policy[int] {
		b := breaker.New(breaker.WithThreshold(5), breaker.WithCooldown(time.Second), breaker.WithClock(env.Clock()))
		env.Watch(b)
		return breaker.Policy[int](b)
	}
	return orderCase{
		File: "order-breaker.svg", Title: "Breaker outside retry: the dependency is down from 10 s to 30 s",
		Scenario: s,
		Sets: []sim.PolicySet[int]{
			{Name: "retry (3) > breaker (5 failures, 1 s)", Build: func(env *sim.Env) resilience.Policy[int] {
				return resilience.Then(retries(env), brk(env))
			}},
			{Name: "breaker (5 failures, 1 s) > retry (3)", Build: func(env *sim.Env) resilience.Policy[int] {
				return resilience.Then(brk(env), retries(env))
			}},
		},
		Window: [2]time.Duration{orderOutageStart, orderOutageEnd}, WindowName: "while down",
	}
}

// The hedge scenario's load spike.
const (
	orderSpikeStart = 3 * time.Second
	orderSpikeEnd   = 7 * time.Second
)

// orderHedge is a hedge without a budget. 10 clients call a server of
// 20ms + 4ms per call in progress, at most 25 at once, 5% of whose calls
// take 200ms more; from 3 s to 7 s, 10 more clients come. Once the load
// makes most calls slower than the hedge's delay (50ms), a hedge without a
// budget sends a second copy of nearly every call, which makes the server
// slower still and fills it up; with a budget of 10% of the calls, the
// hedges stay a tenth of the load.
func orderHedge() orderCase {
	s := sim.Scenario{
		Name:     "order-hedge",
		Seed:     1,
		Duration: 10 * time.Second,
		Bucket:   50 * time.Millisecond,
		Server: sim.Server{Base: 20 * time.Millisecond, Slope: 4 * time.Millisecond, Noise: 2 * time.Millisecond, Capacity: 25,
			Slow: 0.05, SlowLatency: 200 * time.Millisecond},
		Clients: []sim.Clients{
			{N: 10, Think: 50 * time.Millisecond, Ramp: time.Second},
			{N: 10, Start: orderSpikeStart, Stop: orderSpikeEnd, Think: 50 * time.Millisecond},
		},
	}
	return orderCase{
		File: "order-hedge.svg", Title: "Hedge without a budget: 5% slow calls, twice the clients from 3 s to 7 s, capacity 25",
		Scenario: s,
		Sets: []sim.PolicySet[int]{
			{Name: "hedge (50ms, budget 10%)", Build: func(env *sim.Env) resilience.Policy[int] {
				return hedge.New[int](50*time.Millisecond, hedge.WithClock(env.Clock()), hedge.WithBudget(0.1))
			}},
			{Name: "hedge (50ms, no budget)", Build: func(env *sim.Env) resilience.Policy[int] {
				return hedge.New[int](50*time.Millisecond, hedge.WithClock(env.Clock()))
			}},
			{Name: "no hedge", Build: func(*sim.Env) resilience.Policy[int] { return resilience.Policy[int]{} }},
		},
		Window: [2]time.Duration{orderSpikeStart, orderSpikeEnd}, WindowName: "in the spike",
	}
}

// writeOrderTable writes a row per result: the dependency's calls (in all
// and in the case's window), per client call, the callers' p50 and p99
// latency and the share of calls that succeeded.
func writeOrderTable(w io.Writer, c orderCase, results []*sim.Result) {
	fmt.Fprintf(w, "  %-40s %10s %12s %14s %8s %8s %9s\n", "policy set", "dep. calls", c.WindowName, "per call", "p50", "p99", "success")
	for _, r := range results {
		fmt.Fprintf(w, "  %-40s %10d %12d %14.2f %8v %8v %8.2f%%\n", r.Name, r.ServerCalls, r.Window(c.Window[0], c.Window[1]).ServerCalls,
			r.Amplification(), r.Latency(0.5).Round(time.Millisecond), r.Latency(0.99).Round(time.Millisecond), 100*r.SuccessRate())
	}
}
