// Command simulate runs four experiments in the simulator (package sim),
// with the library's real policies, in virtual time, and writes a plot
// (SVG) of each and a text table of the figures:
//
//  1. jitter: the AWS Architecture Blog's "Exponential Backoff And Jitter":
//     clients contend for one record under optimistic concurrency, and
//     retry until their write goes through; exponential backoff without
//     jitter, with full, equal and decorrelated jitter;
//  2. collapse: a retry-driven metastable failure: a 2-second load spike
//     on a server whose latency grows with its load; 3 retries without
//     backoff never recover, backoff with jitter, a retry budget or a
//     breaker do;
//  3. breaker: a breaker in front of a dependency that is down for 30 s
//     lets through only its threshold, then one trial per cooldown;
//  4. order: the recommended order of the policies (fallback > retry >
//     hedge > breaker > bulkhead / rate limiter > timeout) against a
//     mistake, one scenario each: a timeout outside the retry, a breaker
//     outside the retry, a hedge without a budget; the calls to the
//     dependency, the callers' latency (p50, p99) and the success rate.
//
// Usage:
//
//	go run ./examples/simulate [-out dir]
//
// The files go to dir (default: a new temporary directory): jitter.svg,
// collapse.svg, breaker.svg, order-timeout.svg, order-breaker.svg,
// order-hedge.svg and results.txt, which is also printed. It takes a few
// seconds.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/sim"
)

func main() {
	out := flag.String("out", "", "directory for the plots and the table (default: a new temporary directory)")
	flag.Parse()
	dir := *out
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "simulate-"); err != nil {
			log.Fatal(err)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	var table strings.Builder
	if err := run(io.MultiWriter(os.Stdout, &table), dir, 10); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.txt"), []byte(table.String()), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Println("wrote", filepath.Join(dir, "{jitter,collapse,breaker,order-timeout,order-breaker,order-hedge}.svg"), "and results.txt")
}

// run runs the four experiments, writes their tables to w and their plots
// to dir; the jitter experiment's figures are means over seeds seeds.
func run(w io.Writer, dir string, seeds int) error {
	fmt.Fprintf(w, "1. Exponential backoff and jitter: clients contending for one record (mean of %d seeds)\n", seeds)
	for _, n := range []int{25, 50, 100} {
		fmt.Fprintf(w, "\n%d clients:\n", n)
		writeJitterTable(w, jitterExperiment(n, seeds))
	}
	shown := jitterScenario(50, 1)
	shown.Duration, shown.Bucket = 45*time.Second, 250*time.Millisecond
	if err := plot(filepath.Join(dir, "jitter.svg"), "Exponential backoff and jitter: 50 clients contending for one record",
		sim.Compare(shown, jitterSets()...)); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n2. Retry-driven collapse after a 2 s load spike (10 s to 12 s)")
	collapsed := sim.Compare(collapseScenario(), collapseSets()...)
	writeCollapseTable(w, collapsed)
	if err := plot(filepath.Join(dir, "collapse.svg"), "Retry-driven collapse: 50 clients, 50 more for 2 s; does the server come back?", collapsed); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n3. A breaker in front of a dependency down from 10 s to 40 s")
	down := sim.Compare(breakerScenario(), breakerSets()...)
	writeBreakerTable(w, down)
	if err := plot(filepath.Join(dir, "breaker.svg"), "A breaker in front of a dependency that is down for 30 s", down); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n4. The order of the policies: the recommended order, then a mistake")
	for _, c := range orderCases() {
		fmt.Fprintf(w, "\n%s (%s)\n", c.Title, c.File)
		results := sim.Compare(c.Scenario, c.Sets...)
		writeOrderTable(w, c, results)
		if err := plot(filepath.Join(dir, c.File), c.Title, results); err != nil {
			return err
		}
	}
	return nil
}

// plot writes results to the SVG file path.
func plot(path, title string, results []*sim.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(sim.WriteSVG(f, title, results...), f.Close())
}

// 1. Exponential backoff and jitter.

// The jitter experiment follows the blog's: each write takes about 20ms (a
// read and a write of about 10ms each, with a spread), backoff from 5ms
// doubling up to 2s, clients retrying until their write goes through.
const (
	jitterBase = 5 * time.Millisecond
	jitterCap  = 2 * time.Second
)

var jitters = []backoff.Jitter{backoff.None, backoff.Full, backoff.Equal, backoff.Decorrelated}

// jitterScenario is n clients that each write the record once, all
// starting at once.
func jitterScenario(n int, seed uint64) sim.Scenario {
	return sim.Scenario{
		Name:     "jitter",
		Seed:     seed,
		Duration: 10 * time.Minute,
		Bucket:   50 * time.Millisecond,
		Server:   sim.Server{Base: 20 * time.Millisecond, Noise: 3 * time.Millisecond, Conflicts: true},
		Clients:  []sim.Clients{{N: n, Calls: 1}},
	}
}

// jitterSets are exponential backoff with each kind of jitter, retrying
// until the write goes through.
func jitterSets() []sim.PolicySet[int] {
	sets := make([]sim.PolicySet[int], len(jitters))
	for i, j := range jitters {
		name := "exponential, " + j.String() + " jitter"
		if j == backoff.None {
			name = "exponential, no jitter"
		}
		sets[i] = sim.PolicySet[int]{Name: name, Build: func(env *sim.Env) resilience.Policy[int] {
			return retry.New[int](retry.WithClock(env.Clock()), retry.WithAttempts(1_000_000),
				retry.WithBackoff(backoff.Exponential(jitterBase, 2, jitterCap).WithJitter(j).WithRand(env.Rand())))
		}}
	}
	return sets
}

// jitterRow is the mean work (calls at the server) and time (until the
// last client's write went through) of a kind of jitter.
type jitterRow struct {
	Jitter backoff.Jitter
	Work   float64
	Time   time.Duration
}

// jitterExperiment runs the jitter scenario with n clients for each kind
// of jitter over seeds 1 to seeds, and returns the means, in the order of
// jitters. It panics if a client never got its write through.
func jitterExperiment(n, seeds int) []jitterRow {
	rows := make([]jitterRow, len(jitters))
	for i, set := range jitterSets() {
		rows[i].Jitter = jitters[i]
		for seed := range seeds {
			r := sim.Run(jitterScenario(n, uint64(seed+1)), set)
			if r.Successes != n {
				panic(fmt.Sprintf("%s, %d clients, seed %d: %d of the writes went through", set.Name, n, seed+1, r.Successes))
			}
			rows[i].Work += float64(r.ServerCalls) / float64(seeds)
			rows[i].Time += r.Finished / time.Duration(seeds)
		}
	}
	return rows
}

func writeJitterTable(w io.Writer, rows []jitterRow) {
	fmt.Fprintf(w, "  %-14s %12s %12s\n", "jitter", "work (calls)", "time")
	for _, r := range rows {
		fmt.Fprintf(w, "  %-14s %12.0f %12v\n", r.Jitter, r.Work, r.Time.Round(time.Millisecond))
	}
}

// 2. Retry-driven metastable collapse.

// The collapse scenario's times.
const (
	collapseSpikeStart = 10 * time.Second
	collapseSpikeEnd   = 12 * time.Second
	collapseEnd        = 60 * time.Second
	attemptTimeout     = 100 * time.Millisecond
)

// collapseScenario is 50 clients calling a server whose latency grows by
// 3ms for each call in progress (10ms alone), with a pause of 200ms on
// average between calls: the server answers them in about 40ms. From 10 s
// to 12 s, 50 more clients come: the latency passes the 100ms timeout, and
// what follows depends on the retries. A call that timed out goes on
// loading the server until it is done.
func collapseScenario() sim.Scenario {
	return sim.Scenario{
		Name:     "collapse",
		Seed:     1,
		Duration: collapseEnd,
		Bucket:   250 * time.Millisecond,
		Server:   sim.Server{Base: 10 * time.Millisecond, Slope: 3 * time.Millisecond, Capacity: 200},
		Clients: []sim.Clients{
			{N: 50, Think: 200 * time.Millisecond, Ramp: time.Second},
			{N: 50, Start: collapseSpikeStart, Stop: collapseSpikeEnd, Think: 200 * time.Millisecond},
		},
	}
}

// collapseSets are the pipelines of the collapse scenario; each bounds an
// attempt at attemptTimeout.
func collapseSets() []sim.PolicySet[int] {
	attempt := func(env *sim.Env) resilience.Policy[int] {
		return timeout.New[int](attemptTimeout, timeout.WithClock(env.Clock()))
	}
	retries := func(env *sim.Env, opts ...retry.Option) resilience.Policy[int] {
		opts = append([]retry.Option{retry.WithClock(env.Clock()), retry.WithAttempts(4), retry.WithBackoff(backoff.Constant(0))}, opts...)
		return retry.New[int](opts...)
	}
	return []sim.PolicySet[int]{
		{Name: "no retry", Build: attempt},
		{Name: "3 retries, no backoff", Build: func(env *sim.Env) resilience.Policy[int] {
			return resilience.Then(retries(env), attempt(env))
		}},
		{Name: "3 retries, exponential backoff with full jitter", Build: func(env *sim.Env) resilience.Policy[int] {
			jittered := backoff.Exponential(100*time.Millisecond, 2, 2*time.Second).WithJitter(backoff.Full).WithRand(env.Rand())
			return resilience.Then(retries(env, retry.WithBackoff(jittered)), attempt(env))
		}},
		{Name: "3 retries, no backoff, retry budget (10% + 1/s)", Build: func(env *sim.Env) resilience.Policy[int] {
			budget := retry.NewBudget(retry.BudgetConfig{Ratio: 0.1, MinPerSecond: 1, Window: 10 * time.Second, Clock: env.Clock()})
			return resilience.Then(retries(env, retry.WithBudget(budget)), attempt(env))
		}},
		{Name: "3 retries, no backoff, breaker (5 failures, 1 s)", Build: func(env *sim.Env) resilience.Policy[int] {
			b := breaker.New(breaker.WithThreshold(5), breaker.WithCooldown(time.Second), breaker.WithClock(env.Clock()))
			env.Watch(b)
			// A refusal of the open breaker is not retried: the client
			// backs off by itself, and comes back after its pause.
			notRefused := retry.WithRetryIf(func(err error) bool { return !errors.Is(err, resilience.ErrRefused) })
			return resilience.Then(retries(env, notRefused), breaker.Policy[int](b), attempt(env))
		}},
	}
}

// collapseWindows are the windows of the collapse scenario's table: before
// the spike, and the last 20 s, long after it.
var (
	beforeSpike = [2]time.Duration{5 * time.Second, collapseSpikeStart}
	longAfter   = [2]time.Duration{40 * time.Second, collapseEnd}
)

// perSecond returns t's successes per second over a window.
func perSecond(t sim.Totals, window [2]time.Duration) float64 {
	return float64(t.Successes) / (window[1] - window[0]).Seconds()
}

func writeCollapseTable(w io.Writer, results []*sim.Result) {
	fmt.Fprintf(w, "  %-50s %14s %14s %15s %15s\n", "policy set", "ok/s before", "ok/s 40s-60s", "amplification", "amp. 40s-60s")
	for _, r := range results {
		before, after := r.Window(beforeSpike[0], beforeSpike[1]), r.Window(longAfter[0], longAfter[1])
		fmt.Fprintf(w, "  %-50s %14.1f %14.1f %15.2f %15.2f\n", r.Name, perSecond(before, beforeSpike), perSecond(after, longAfter),
			r.Amplification(), after.Amplification())
	}
	fmt.Fprintln(w)
	_ = sim.WriteTable(w, results...)
}

// 3. A breaker in front of a down dependency.

// The breaker scenario's settings.
const (
	outageStart = 10 * time.Second
	outageEnd   = 40 * time.Second
	threshold   = 5
	cooldown    = 2 * time.Second
	maxTrials   = 1
)

// breakerScenario is 20 clients calling, with a pause of 50ms on average,
// a server that is down from 10 s to 40 s: each call fails at once.
func breakerScenario() sim.Scenario {
	return sim.Scenario{
		Name:     "breaker",
		Seed:     1,
		Duration: 60 * time.Second,
		Bucket:   10 * time.Millisecond,
		Server:   sim.Server{Outages: []sim.Outage{{Start: outageStart, End: outageEnd, Mode: sim.Down}}},
		Clients:  []sim.Clients{{N: 20, Think: 50 * time.Millisecond, Ramp: time.Second}},
	}
}

// breakerSets are the calls without a breaker, and through one.
func breakerSets() []sim.PolicySet[int] {
	return []sim.PolicySet[int]{
		{Name: "no breaker", Build: func(*sim.Env) resilience.Policy[int] { return resilience.Policy[int]{} }},
		{Name: fmt.Sprintf("breaker (threshold %d, cooldown %v, %d trial)", threshold, cooldown, maxTrials), Build: func(env *sim.Env) resilience.Policy[int] {
			b := breaker.New(breaker.WithThreshold(threshold), breaker.WithCooldown(cooldown), breaker.WithMaxTrials(maxTrials),
				breaker.WithClock(env.Clock()))
			env.Watch(b)
			return breaker.Policy[int](b)
		}},
	}
}

// breakerBound is the most calls a breaker of the scenario's settings lets
// through to the down server: the threshold, then MaxTrials per cooldown.
func breakerBound() int {
	outage := outageEnd - outageStart
	return threshold + maxTrials*int((outage+cooldown-1)/cooldown)
}

func writeBreakerTable(w io.Writer, results []*sim.Result) {
	fmt.Fprintf(w, "  %-45s %24s %26s\n", "policy set", "server calls while down", "bound (threshold+trials)")
	for _, r := range results {
		fmt.Fprintf(w, "  %-45s %24d %26d\n", r.Name, r.Window(outageStart, outageEnd).ServerCalls, breakerBound())
	}
	fmt.Fprintln(w)
	_ = sim.WriteTable(w, results...)
}
