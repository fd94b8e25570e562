package sim_test

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/sim"
)

// outage is 20 clients calling a server that is down from 10 s to 20 s.
var outage = sim.Scenario{
	Name:     "outage",
	Seed:     1,
	Duration: 30 * time.Second,
	Server:   sim.Server{Base: 20 * time.Millisecond, Outages: []sim.Outage{{Start: 10 * time.Second, End: 20 * time.Second, Mode: sim.Down}}},
	Clients:  []sim.Clients{{N: 20, Think: 100 * time.Millisecond, Ramp: time.Second}},
}

// retries is 3 attempts with jittered exponential backoff, on the run's
// clock and random source.
var retries = sim.PolicySet[int]{Name: "retry", Build: func(env *sim.Env) resilience.Policy[int] {
	return retry.New[int](retry.WithAttempts(3), retry.WithClock(env.Clock()),
		retry.WithBackoff(backoff.Exponential(50*time.Millisecond, 2, time.Second).WithJitter(backoff.Full).WithRand(env.Rand())))
}}

// guarded is the same retry in front of a breaker, which the plots show.
// While the breaker is open its refusals fail fast: the retry returns them
// at once, the clients call again after their think time, and the server
// sees few calls until the outage ends.
var guarded = sim.PolicySet[int]{Name: "retry > breaker", Build: func(env *sim.Env) resilience.Policy[int] {
	b := breaker.New(breaker.WithThreshold(5), breaker.WithCooldown(2*time.Second), breaker.WithClock(env.Clock()))
	env.Watch(b)
	return resilience.Then(retries.Build(env), breaker.Policy[int](b))
}}

func ExampleRun() {
	r := sim.Run(outage, retries)
	during := r.Window(10*time.Second, 20*time.Second)
	fmt.Printf("amplification %.2f over the run, %.2f during the outage\n", r.Amplification(), during.Amplification())
	fmt.Println("same result again:", sim.Run(outage, retries).Totals == r.Totals)
	// Output:
	// amplification 1.53 over the run, 2.98 during the outage
	// same result again: true
}

func ExampleCompare() {
	for _, r := range sim.Compare(outage, retries, guarded) {
		fmt.Printf("%-16s server calls during the outage: %d\n", r.Name, r.Window(10*time.Second, 20*time.Second).ServerCalls)
	}
	// Output:
	// retry            server calls during the outage: 3477
	// retry > breaker  server calls during the outage: 14
}

func ExampleWriteTable() {
	_ = sim.WriteTable(os.Stdout, sim.Compare(outage, retries, guarded)...)
	// Output:
	// policy set       calls    ok  refused  failed  server calls  amplification  last call ended
	//   retry             4414  3265        0    1149          6738           1.53          29.987s
	//   retry > breaker   5219  3202     2016       1          3217           0.62          29.994s
}

func ExampleWriteSVG() {
	var svg strings.Builder
	if err := sim.WriteSVG(&svg, "An outage of 10 s", sim.Compare(outage, retries, guarded)...); err != nil {
		fmt.Println(err)
	}
	fmt.Println(strings.HasPrefix(svg.String(), "<svg "), strings.Count(svg.String(), "<polyline"))
	// Output: true 8
}

func ExampleEnv_Watch() {
	r := sim.Run(outage, guarded)
	opened := 0
	for i, st := range r.Breaker {
		if st == breaker.Open && (i == 0 || r.Breaker[i-1] != breaker.Open) {
			opened++
		}
	}
	fmt.Println(len(r.Breaker), "buckets of", r.Bucket, "- the breaker opened", opened, "time(s)")
	// Output: 200 buckets of 150ms - the breaker opened 1 time(s)
}

func ExampleEnv_Clock() {
	down := sim.Server{Outages: []sim.Outage{{End: 2 * time.Hour, Mode: sim.Down}}}
	r := sim.Run(sim.Scenario{Duration: 2 * time.Hour, Server: down, Clients: []sim.Clients{{Calls: 1}}}, sim.PolicySet[int]{Build: func(env *sim.Env) resilience.Policy[int] {
		// A retry that waits an hour between attempts, in virtual time.
		return retry.New[int](retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(time.Hour)), retry.WithClock(env.Clock()))
	}})
	fmt.Println(r.Finished, r.ServerCalls)
	// Output: 1h0m0s 2
}

func ExampleEnv_Rand() {
	s := sim.Scenario{Seed: 42, Clients: []sim.Clients{{Calls: 1}}}
	var a, b uint64
	sim.Run(s, sim.PolicySet[int]{Build: func(env *sim.Env) resilience.Policy[int] { a = env.Rand().Uint64(); return resilience.Policy[int]{} }})
	sim.Run(s, sim.PolicySet[int]{Build: func(env *sim.Env) resilience.Policy[int] { b = env.Rand().Uint64(); return resilience.Policy[int]{} }})
	fmt.Println(a == b)
	// Output: true
}

func ExampleScenario_Validate() {
	err := sim.Scenario{Server: sim.Server{Capacity: -1}, Clients: []sim.Clients{{}}}.Validate()
	fmt.Println(err)
	// Output: sim: Server.Capacity must be >= 0, got -1
}

func ExampleServer_Validate() {
	err := sim.Server{Outages: []sim.Outage{{Start: 5 * time.Second, End: time.Second}}}.Validate()
	fmt.Println(err)
	// Output: sim: Server.Outages[0] needs 0 <= Start <= End, got Start 5s, End 1s
}

func ExampleResult_Window() {
	r := sim.Run(outage, retries)
	for _, w := range [][2]time.Duration{{0, 10 * time.Second}, {10 * time.Second, 20 * time.Second}, {20 * time.Second, 30 * time.Second}} {
		t := r.Window(w[0], w[1])
		fmt.Printf("%v-%v: %d calls, %d ok\n", w[0], w[1], t.Calls, t.Successes)
	}
	// Output:
	// 0s-10s: 1586 calls, 1585 ok
	// 10s-20s: 1168 calls, 20 ok
	// 20s-30s: 1660 calls, 1660 ok
}

func ExampleTotals_Amplification() {
	fmt.Println(sim.Totals{Calls: 100, ServerCalls: 300}.Amplification())
	// Output: 3
}

func ExampleOutageMode_String() {
	fmt.Println(sim.Down, sim.Hang)
	// Output: down hang
}

func ExampleOutage() {
	s := outage
	s.Server.Outages = []sim.Outage{{Start: 10 * time.Second, End: 20 * time.Second, Mode: sim.Hang}}
	// Without a timeout, each client that calls during the hang waits
	// for good: no call ends after 10 s.
	r := sim.Run(s, retries)
	fmt.Println(r.Window(10*time.Second, 30*time.Second).Calls)
	// Output: 0
}

// Latency gives the quantiles of the callers' latency. Here a hedge after
// 50ms cuts the tail of a server 5% of whose calls take 200ms more: the
// hedge runs its attempts on goroutines of its own, and the simulator runs
// them in virtual time as it runs the clients.
func ExampleResult_Latency() {
	tail := sim.Scenario{
		Seed:     1,
		Duration: 20 * time.Second,
		Server:   sim.Server{Base: 20 * time.Millisecond, Slow: 0.05, SlowLatency: 200 * time.Millisecond},
		Clients:  []sim.Clients{{N: 10, Think: 50 * time.Millisecond}},
	}
	plain := sim.PolicySet[int]{Name: "no hedge", Build: func(*sim.Env) resilience.Policy[int] { return resilience.Policy[int]{} }}
	hedged := sim.PolicySet[int]{Name: "hedge (50ms)", Build: func(env *sim.Env) resilience.Policy[int] {
		return hedge.New[int](50*time.Millisecond, hedge.WithClock(env.Clock()))
	}}
	for _, r := range sim.Compare(tail, plain, hedged) {
		fmt.Printf("%-12s p50 %v, p99 %v, %.2f server calls per call\n", r.Name, r.Latency(0.5), r.Latency(0.99), r.Amplification())
	}
	// Output:
	// no hedge     p50 20ms, p99 220ms, 1.00 server calls per call
	// hedge (50ms) p50 20ms, p99 70ms, 1.05 server calls per call
}
