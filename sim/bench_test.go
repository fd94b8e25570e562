package sim

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// BenchmarkSimulate10k runs 10 000 client calls (100 clients × 100 calls)
// through retry > breaker > timeout against a server with a 20-second
// outage: one op is one whole run. The target is under a second of
// wall-clock time per run.
func BenchmarkSimulate10k(b *testing.B) {
	s := Scenario{
		Seed:     1,
		Duration: 10 * time.Minute,
		Server: Server{Base: 20 * time.Millisecond, Slope: 100 * time.Microsecond, Capacity: 200,
			Outages: []Outage{{Start: 10 * time.Second, End: 30 * time.Second, Mode: Down}}},
		Clients: []Clients{{N: 100, Calls: 100, Think: 100 * time.Millisecond, Ramp: time.Second}},
	}
	set := PolicySet[int]{Name: "retry > breaker > timeout", Build: func(env *Env) resilience.Policy[int] {
		br := breaker.New(breaker.WithClock(env.Clock()), breaker.WithThreshold(5), breaker.WithCooldown(time.Second))
		env.Watch(br)
		return resilience.Then(
			retry.New[int](retry.WithClock(env.Clock()), retry.WithAttempts(3), retry.WithMaxElapsed(2*time.Second),
				retry.WithBackoff(backoff.Exponential(50*time.Millisecond, 2, time.Second).WithJitter(backoff.Full).WithRand(env.Rand()))),
			breaker.Policy[int](br),
			timeout.New[int](time.Second, timeout.WithClock(env.Clock())),
		)
	}}
	b.ReportAllocs()
	var r *Result
	for b.Loop() {
		r = Run(s, set)
	}
	if r.Calls != 10000 {
		b.Fatalf("%d client calls, want 10000", r.Calls)
	}
	b.ReportMetric(float64(r.ServerCalls), "server-calls/run")
}

// BenchmarkSimulateHedge runs 2 000 client calls (20 clients × 100 calls)
// through a hedge, 5% of whose first attempts are slow enough to be
// hedged, and reports the cost per client call: a pipeline whose calls
// wait on their own goroutines makes the scheduler read the stacks at
// each event.
func BenchmarkSimulateHedge(b *testing.B) {
	s := Scenario{
		Seed:     1,
		Duration: 10 * time.Minute,
		Server:   Server{Base: 20 * time.Millisecond, Slow: 0.05, SlowLatency: 200 * time.Millisecond},
		Clients:  []Clients{{N: 20, Calls: 100, Think: 50 * time.Millisecond, Ramp: time.Second}},
	}
	set := PolicySet[int]{Name: "hedge", Build: func(env *Env) resilience.Policy[int] {
		return hedge.New[int](50*time.Millisecond, hedge.WithClock(env.Clock()))
	}}
	var r *Result
	for b.Loop() {
		r = Run(s, set)
	}
	if r.Calls != 2000 {
		b.Fatalf("%d client calls, want 2000", r.Calls)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(r.Calls), "ns/client-call")
}
