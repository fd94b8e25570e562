package sim

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/adaptive"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/chaos"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/throttle"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// The tests of this file run a scenario through each policy of the
// library: the run ends without a panic, gives the same Result again with
// the same seed (on all processors and on one), and its numbers are those
// the policy should give.

// policyScenario is 20 clients calling, with a pause of 50ms on average,
// for 10 s, a server of 20ms, down from 3 s to 5 s.
func policyScenario(mode OutageMode) Scenario {
	return Scenario{
		Name:     "policies",
		Seed:     3,
		Duration: 10 * time.Second,
		Bucket:   100 * time.Millisecond,
		Server:   Server{Base: 20 * time.Millisecond, Outages: []Outage{{Start: 3 * time.Second, End: 5 * time.Second, Mode: mode}}},
		Clients:  []Clients{{N: 20, Think: 50 * time.Millisecond, Ramp: 100 * time.Millisecond}},
	}
}

// runTwice runs s with set three times (the last on one processor) and
// fails the test if the results differ; it returns the first.
func runTwice(t *testing.T, s Scenario, set PolicySet[int]) *Result {
	t.Helper()
	defer goleak.VerifyNone(t)
	first := Run(s, set)
	if diff := cmp.Diff(first, Run(s, set)); diff != "" {
		t.Errorf("%s: same seed, different result (-first +again):\n%s", set.Name, diff)
	}
	prev := runtime.GOMAXPROCS(1)
	again := Run(s, set)
	runtime.GOMAXPROCS(prev)
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("%s: same seed on one processor, different result (-first +again):\n%s", set.Name, diff)
	}
	if first.Calls == 0 {
		t.Fatalf("%s: no client call ended", set.Name)
	}
	return first
}

var (
	outageWindow = [2]time.Duration{3 * time.Second, 5 * time.Second}
	afterOutage  = [2]time.Duration{6 * time.Second, 10 * time.Second}
)

func TestSimulatesRetry(t *testing.T) {
	r := runTwice(t, policyScenario(Down), PolicySet[int]{Name: "retry", Build: func(env *Env) resilience.Policy[int] {
		return retry.New[int](retry.WithClock(env.Clock()), retry.WithAttempts(3),
			retry.WithBackoff(backoff.Exponential(10*time.Millisecond, 2, 100*time.Millisecond).WithJitter(backoff.Full).WithRand(env.Rand())))
	}})
	during := r.Window(outageWindow[0], outageWindow[1])
	if a := during.Amplification(); a < 2.9 || a > 3.1 {
		t.Errorf("amplification during the outage = %.2f (%+v), want 3: every call tries 3 times", a, during)
	}
	if after := r.Window(afterOutage[0], afterOutage[1]); after.Successes != after.Calls || after.Amplification() > 1.01 {
		t.Errorf("after the outage %+v: want every call to succeed at the first attempt", after)
	}
}

func TestSimulatesBreaker(t *testing.T) {
	r := runTwice(t, policyScenario(Down), PolicySet[int]{Name: "breaker", Build: func(env *Env) resilience.Policy[int] {
		b := breaker.New(breaker.WithThreshold(5), breaker.WithCooldown(500*time.Millisecond), breaker.WithClock(env.Clock()))
		env.Watch(b)
		return breaker.Policy[int](b)
	}})
	during := r.Window(outageWindow[0], outageWindow[1])
	// The threshold, then about a trial per cooldown: a handful in 2 s.
	if during.ServerCalls > 15 || during.Refused < 100 {
		t.Errorf("during the outage %+v: want at most 15 server calls, and the rest refused", during)
	}
	if !slices.Contains(r.Breaker, breaker.Open) || r.Breaker[len(r.Breaker)-1] != breaker.Closed {
		t.Errorf("breaker states %v: want open during the outage, closed at the end", r.Breaker)
	}
}

// timeoutSets are a timeout of 100ms, waiting for the op to return, and
// one WithAbandon, which returns at once.
func testTimeout(t *testing.T, abandon bool) {
	s := policyScenario(Hang)
	s.Clients[0].N = 5 // a timeout WithAbandon makes every step of the run read the goroutines' stacks: keep it short
	r := runTwice(t, s, PolicySet[int]{Name: "timeout", Build: func(env *Env) resilience.Policy[int] {
		return timeout.New[int](100*time.Millisecond, timeout.WithClock(env.Clock()), timeout.WithAbandon(abandon))
	}})
	during := r.Window(outageWindow[0]+200*time.Millisecond, outageWindow[1])
	if during.Failures == 0 || during.Successes != 0 {
		t.Errorf("during the hang %+v: want every call to fail", during)
	}
	if p100 := r.Latency(1); p100 != 100*time.Millisecond {
		t.Errorf("longest call took %v, want the timeout, 100ms", p100)
	}
	if p50 := r.Latency(0.5); p50 != 20*time.Millisecond {
		t.Errorf("median call took %v, want the server's 20ms", p50)
	}
}

func TestSimulatesTimeout(t *testing.T)            { testTimeout(t, false) }
func TestSimulatesTimeoutWithAbandon(t *testing.T) { testTimeout(t, true) }

// tailScenario is 10 clients calling a server of 20ms ± 10ms for 10 s.
func tailScenario() Scenario {
	return Scenario{Name: "tail", Seed: 5, Duration: 10 * time.Second, Server: Server{Base: 20 * time.Millisecond, Noise: 10 * time.Millisecond},
		Clients: []Clients{{N: 10, Think: 50 * time.Millisecond}}}
}

func TestSimulatesHedge(t *testing.T) {
	plain := runTwice(t, tailScenario(), PolicySet[int]{Name: "none", Build: func(*Env) resilience.Policy[int] { return resilience.Policy[int]{} }})
	r := runTwice(t, tailScenario(), PolicySet[int]{Name: "hedge", Build: func(env *Env) resilience.Policy[int] {
		return hedge.New[int](25*time.Millisecond, hedge.WithClock(env.Clock()))
	}})
	if r.Successes != r.Calls {
		t.Errorf("%+v: want every call to succeed", r.Totals)
	}
	// About a third of the calls take more than 25ms, and get a hedge.
	if a := r.Amplification(); a < 1.1 || a > 1.6 {
		t.Errorf("amplification %.2f, want between 1.1 and 1.6", a)
	}
	if p, q := r.Latency(0.99), plain.Latency(0.99); p >= q {
		t.Errorf("p99 with a hedge %v, without %v: want the hedge's lower", p, q)
	}
}

func TestSimulatesHedgeBudget(t *testing.T) {
	r := runTwice(t, tailScenario(), PolicySet[int]{Name: "hedge", Build: func(env *Env) resilience.Policy[int] {
		return hedge.New[int](25*time.Millisecond, hedge.WithClock(env.Clock()), hedge.WithBudget(0.05))
	}})
	if a := r.Amplification(); a < 1.01 || a > 1.07 {
		t.Errorf("amplification %.2f, want about 1.05: the budget allows a hedge for 5%% of the calls", a)
	}
}

// slowScenario is 20 clients calling, with a pause of 10ms on average, a
// server of 50ms, for d.
func slowScenario(d time.Duration) Scenario {
	return Scenario{Name: "slow", Seed: 9, Duration: d, Server: Server{Base: 50 * time.Millisecond},
		Clients: []Clients{{N: 20, Think: 10 * time.Millisecond}}}
}

func maxInFlight(r *Result) int { return slices.Max(r.InFlight) }

func TestSimulatesBulkhead(t *testing.T) {
	for _, queue := range []int{0, 5} {
		r := runTwice(t, slowScenario(time.Second), PolicySet[int]{Name: "bulkhead", Build: func(env *Env) resilience.Policy[int] {
			opts := []bulkhead.Option{bulkhead.WithClock(env.Clock())}
			if queue > 0 {
				opts = append(opts, bulkhead.WithMaxQueue(queue), bulkhead.WithMaxWait(30*time.Millisecond))
			}
			return bulkhead.Policy[int](bulkhead.New(5, opts...))
		}})
		if n := maxInFlight(r); n != 5 {
			t.Errorf("queue %d: at most %d calls in progress at the server, want 5", queue, n)
		}
		if r.Refused == 0 || r.Successes == 0 || r.Failures != 0 {
			t.Errorf("queue %d: %+v: want successes and refusals", queue, r.Totals)
		}
		if queue > 0 {
			// A queued call waits at most 30ms for a slot, then takes 50ms.
			if p := r.Latency(1); p <= 50*time.Millisecond || p > 80*time.Millisecond {
				t.Errorf("queue %d: longest call %v, want in (50ms, 80ms]: some calls waited in the queue", queue, p)
			}
		}
	}
}

func TestSimulatesRateLimit(t *testing.T) {
	for _, wait := range []bool{false, true} {
		r := runTwice(t, slowScenario(2*time.Second), PolicySet[int]{Name: "ratelimit", Build: func(env *Env) resilience.Policy[int] {
			l := ratelimit.New(50, 5, ratelimit.WithClock(env.Clock()), ratelimit.WithMaxWait(time.Second))
			if wait {
				return ratelimit.WaitPolicy[int](l)
			}
			return ratelimit.Policy[int](l)
		}})
		if max := 50*2 + 5; r.ServerCalls > max || r.ServerCalls < max-20 {
			t.Errorf("wait %v: %d server calls in 2 s, want about 50/s + the burst, %d", wait, r.ServerCalls, max)
		}
		if wait && r.Refused != 0 || !wait && r.Refused == 0 {
			t.Errorf("wait %v: %+v: want refusals only without waiting", wait, r.Totals)
		}
	}
}

func TestSimulatesAdaptive(t *testing.T) {
	s := slowScenario(time.Second)
	s.Server.Slope = 5 * time.Millisecond // latency grows with the load: the limit comes down
	r := runTwice(t, s, PolicySet[int]{Name: "adaptive", Build: func(env *Env) resilience.Policy[int] {
		return adaptive.Policy[int](adaptive.New(adaptive.WithClock(env.Clock()), adaptive.WithMinLimit(1), adaptive.WithMaxLimit(10),
			adaptive.WithMaxQueue(5), adaptive.WithMaxWait(50*time.Millisecond)))
	}})
	if n := maxInFlight(r); n > 10 || n < 2 {
		t.Errorf("at most %d calls in progress, want between 2 and the limit's max, 10", n)
	}
	if r.Successes == 0 {
		t.Errorf("%+v: want successes", r.Totals)
	}
}

func TestSimulatesThrottle(t *testing.T) {
	r := runTwice(t, policyScenario(Down), PolicySet[int]{Name: "throttle", Build: func(env *Env) resilience.Policy[int] {
		return throttle.Policy[int](throttle.New(throttle.WithClock(env.Clock()), throttle.WithRand(env.Rand()), throttle.WithWindow(time.Second)))
	}})
	during := r.Window(outageWindow[0]+500*time.Millisecond, outageWindow[1])
	if during.Refused == 0 || during.ServerCalls >= during.Calls {
		t.Errorf("during the outage %+v: want the throttle to refuse some calls itself", during)
	}
	if after := r.Window(afterOutage[0]+2*time.Second, afterOutage[1]); after.Successes != after.Calls {
		t.Errorf("long after the outage %+v: want every call to go through", after)
	}
}

func TestSimulatesChaos(t *testing.T) {
	errChaos := errors.New("chaos")
	s := policyScenario(Down)
	s.Server.Outages = nil
	r := runTwice(t, s, PolicySet[int]{Name: "chaos", Build: func(env *Env) resilience.Policy[int] {
		faults := chaos.NewInjector(0.2, chaos.WithRand(env.Rand()))
		slow := chaos.NewInjector(0.1, chaos.WithRand(env.Rand()))
		return resilience.Then(
			chaos.Fault[int](faults, func(context.Context) error { return errChaos }),
			chaos.Latency[int](slow, env.Clock(), func() time.Duration { return 200 * time.Millisecond }),
		)
	}})
	if share := float64(r.Failures) / float64(r.Calls); share < 0.17 || share > 0.23 {
		t.Errorf("%+v: %.3f of the calls failed, want about 0.2", r.Totals, share)
	}
	if n := r.ServerCalls - (r.Calls - r.Failures); n < 0 || n > 20 { // at most the 20 calls cut short at the end
		t.Errorf("%+v: want the failed calls not to reach the server", r.Totals)
	}
	if p := r.Latency(0.95); p != 220*time.Millisecond {
		t.Errorf("p95 %v, want 220ms: a tenth of the calls that reach the server wait 200ms more", p)
	}
}

func TestSimulatesFallback(t *testing.T) {
	r := runTwice(t, policyScenario(Down), PolicySet[int]{Name: "fallback", Build: func(env *Env) resilience.Policy[int] {
		return resilience.Fallback[int](func(context.Context, error) (int, error) { return -1, nil })
	}})
	if r.Successes != r.Calls || r.Window(outageWindow[0], outageWindow[1]).Down == 0 {
		t.Errorf("%+v: want the outage's failures all turned into successes", r.Totals)
	}
}
