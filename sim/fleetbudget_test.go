package sim_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/fleetbudget"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/sim"
)

// The fleet-budget experiment: a fleet of instances behind a round-robin
// balancer, each with its own retry policy (3 attempts) in front of a
// dependency that fails half of its calls, with no budget, a retry budget
// per instance (retry.Budget), and a budget shared by the fleet.
//
// The shared budget is the algorithm of resilienceredis.RetryBudget
// (internal/fleetbudget, the same code), with its Redis store replaced by a
// store in memory on the run's clock (fleetbudget.MemStore) and its flusher
// by a flush every flushEvery of virtual time, made by the first Deposit or
// Withdraw of the instance after it is due: what Redis and the network add
// (round-trip time, a Redis away) is not simulated.
const (
	fleetInstances = 10
	fleetRatio     = 0.1
	fleetFloor     = 5 // MinPerSecond of each instance
	fleetWindow    = 10 * time.Second
	flushEvery     = 50 * time.Millisecond // resilienceredis's default FlushInterval
)

var errFlaky = errors.New("flaky dependency")

// simFleetBudget is one instance's side of the shared budget in the
// simulator: fleetbudget.Budget, flushed to the fleet's MemStore every
// flushEvery of the run's time.
type simFleetBudget struct {
	mu    sync.Mutex
	b     *fleetbudget.Budget
	store *fleetbudget.MemStore
	clk   clock.Clock
	next  time.Time
}

func (f *simFleetBudget) maybeFlush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if now := f.clk.Now(); !now.Before(f.next) {
		f.next = now.Add(flushEvery)
		f.b.Flush(context.Background(), f.store) // a MemStore never fails
	}
}

func (f *simFleetBudget) Deposit()       { f.maybeFlush(); f.b.Deposit() }
func (f *simFleetBudget) Withdraw() bool { f.maybeFlush(); return f.b.Withdraw() }

// fleetSet is the policy set of the experiment: budgets returns the
// budget of each instance (nil: none).
func fleetSet(name string, budgets func(env *sim.Env) []retry.Budgeter) sim.PolicySet[int] {
	return sim.PolicySet[int]{Name: name, Build: func(env *sim.Env) resilience.Policy[int] {
		clk := env.Clock()
		flaky := rand.New(rand.NewPCG(1, 2))
		// The dependency's errors: half of the calls that reached the
		// server fail, after their latency.
		fail := resilience.New("flaky", func(ctx context.Context, next resilience.Next[int]) (int, error) {
			v, err := next.Call(ctx)
			if err == nil && flaky.IntN(2) == 0 {
				err = errFlaky
			}
			return v, err
		})
		bs := budgets(env)
		inst := make([]resilience.Policy[int], fleetInstances)
		for i := range inst {
			opts := []retry.Option{retry.WithClock(clk), retry.WithAttempts(3),
				retry.WithBackoff(backoff.Exponential(10*time.Millisecond, 2, 100*time.Millisecond).WithJitter(backoff.Full).WithRand(env.Rand()))}
			if bs != nil {
				opts = append(opts, retry.WithBudget(bs[i]))
			}
			inst[i] = resilience.Then(retry.New[int](opts...), fail)
		}
		var k int
		return resilience.New("balancer", func(ctx context.Context, next resilience.Next[int]) (int, error) {
			i := k % fleetInstances // round robin: only one simulated call runs at a time
			k++
			return inst[i].Do(ctx, func(ctx context.Context) (int, error) { return next.Call(ctx) })
		})
	}}
}

func fleetExperiment() []*sim.Result {
	s := sim.Scenario{Name: "fleet budget", Seed: 7, Duration: 40 * time.Second,
		Server:  sim.Server{Base: 10 * time.Millisecond},
		Clients: []sim.Clients{{N: 100, Ramp: time.Second, Think: 90 * time.Millisecond}}}
	none := fleetSet("no budget", func(*sim.Env) []retry.Budgeter { return nil })
	local := fleetSet("budget per instance", func(env *sim.Env) []retry.Budgeter {
		bs := make([]retry.Budgeter, fleetInstances)
		for i := range bs {
			bs[i] = retry.NewBudget(retry.BudgetConfig{Ratio: fleetRatio, MinPerSecond: fleetFloor, Window: fleetWindow, Clock: env.Clock()})
		}
		return bs
	})
	shared := fleetSet("fleet budget", func(env *sim.Env) []retry.Budgeter {
		store := fleetbudget.NewMemStore(fleetWindow, env.Clock())
		bs := make([]retry.Budgeter, fleetInstances)
		for i := range bs {
			bs[i] = &simFleetBudget{store: store, clk: env.Clock(), next: env.Clock().Now(),
				b: fleetbudget.New(fleetbudget.Config{Ratio: fleetRatio, Reserve: fleetFloor * fleetWindow.Seconds(), Window: fleetWindow, Clock: env.Clock()})}
		}
		return bs
	})
	return sim.Compare(s, none, local, shared)
}

// retryRatio is the retries per client call of t: (server calls - calls) /
// calls.
func retryRatio(t sim.Totals) float64 {
	return float64(t.ServerCalls-t.Calls) / float64(t.Calls)
}

// TestFleetBudgetHoldsItsRatio: with 10 instances, each retrying up to 3
// attempts against a dependency that fails half of its calls, the fleet's
// retries per client call, over the last 30 s of the run (after the first
// window, 10 s), are within 10% of the fleet budget's Ratio, 0.1; without a
// budget they are 0.75 (0.5 + 0.25), and with a budget of the same Ratio
// and floor per instance they are Ratio plus every instance's floor
// (5/s over about 100 calls/s each: about 0.15).
func TestFleetBudgetHoldsItsRatio(t *testing.T) {
	rs := fleetExperiment()
	var table strings.Builder
	fmt.Fprintf(&table, "%-20s %8s %12s %14s %14s\n", "policy set", "calls", "server calls", "amplification", "retries/call")
	ratios := make([]float64, len(rs))
	for i, r := range rs {
		w := r.Window(10*time.Second, 40*time.Second)
		ratios[i] = retryRatio(w)
		fmt.Fprintf(&table, "%-20s %8d %12d %14.3f %14.3f\n", r.Name, w.Calls, w.ServerCalls, w.Amplification(), ratios[i])
	}
	t.Logf("10 instances, 3 attempts, 50%% errors, Ratio %v, MinPerSecond %v per instance, from 10 s to 40 s:\n%s", fleetRatio, fleetFloor, table.String())
	none, local, fleet := ratios[0], ratios[1], ratios[2]
	if none < 0.7 || none > 0.8 {
		t.Errorf("no budget: %.3f retries per call, want about 0.75", none)
	}
	if fleet < 0.9*fleetRatio || fleet > 1.1*fleetRatio {
		t.Errorf("fleet budget: %.3f retries per call, want within 10%% of the Ratio, %v", fleet, fleetRatio)
	}
	if local < fleet+0.03 {
		t.Errorf("budget per instance: %.3f retries per call, want the instances' floors above the fleet's %.3f", local, fleet)
	}
}
