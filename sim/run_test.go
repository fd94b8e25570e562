package sim

import (
	"context"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

func TestClientsCalls(t *testing.T) {
	r := Run(Scenario{Clients: []Clients{{N: 3, Calls: 4}, {Calls: 2}}}, PolicySet[int]{Build: identity})
	if r.Calls != 14 || r.Successes != 14 {
		t.Errorf("%+v, want 14 calls (3 × 4 + 1 × 2), all ok", r.Totals)
	}
}

func identity(*Env) resilience.Policy[int] { return resilience.Policy[int]{} }

// TestClientsStartRampStop checks when a group's calls start.
func TestClientsStartRampStop(t *testing.T) {
	var calls []call
	Run(Scenario{Duration: 10 * time.Second, Clients: []Clients{{N: 20, Calls: 1, Start: 2 * time.Second, Ramp: time.Second}}}, measured(&calls, nil))
	starts := make([]time.Duration, len(calls))
	for i, c := range calls {
		starts[i] = c.Start
	}
	slices.Sort(starts)
	if len(starts) != 20 || starts[0] < 2*time.Second || starts[0] >= 2200*time.Millisecond || starts[19] < 2800*time.Millisecond || starts[19] >= 3*time.Second {
		t.Errorf("first calls at %v, want 20 spread over [2s, 3s)", starts)
	}

	calls = nil
	Run(Scenario{Duration: 10 * time.Second, Clients: []Clients{{N: 5, Start: 2 * time.Second, Stop: 5 * time.Second}}}, measured(&calls, nil))
	for _, c := range calls {
		if c.Start < 2*time.Second || c.Start >= 5*time.Second {
			t.Fatalf("a call started at %v, outside [Start, Stop) = [2s, 5s)", c.Start)
		}
	}
	if n := len(calls); n < 5*290 {
		t.Errorf("%d calls, want about 5 × 300 (back to back, 10ms each, for 3s)", n)
	}
}

// TestClientsThink checks the mean pause between a client's calls.
func TestClientsThink(t *testing.T) {
	r := Run(Scenario{Duration: 1000 * time.Second, Clients: []Clients{{Think: 90 * time.Millisecond}}}, PolicySet[int]{Build: identity})
	// Each cycle is 10ms of call and 90ms of pause on average: 10 000 calls.
	if r.Calls < 9700 || r.Calls > 10300 {
		t.Errorf("%d calls in 1000s, want about 10000", r.Calls)
	}
}

// collapseLike is a scenario that exercises every piece of the simulator:
// a spike, an outage, a capacity, noise, and a pipeline of retry with a
// jittered backoff and a budget, breaker, rate limiter and timeout.
func collapseLike(seed uint64) (Scenario, PolicySet[int]) {
	s := Scenario{Seed: seed, Duration: 30 * time.Second, Bucket: 100 * time.Millisecond,
		Server: Server{Base: 10 * time.Millisecond, Slope: 2 * time.Millisecond, Noise: time.Millisecond, Capacity: 100,
			Outages: []Outage{{Start: 20 * time.Second, End: 22 * time.Second, Mode: Hang}}},
		Clients: []Clients{{N: 40, Think: 100 * time.Millisecond, Ramp: time.Second}, {N: 40, Start: 5 * time.Second, Stop: 7 * time.Second, Think: 50 * time.Millisecond}},
	}
	set := PolicySet[int]{Name: "everything", Build: func(env *Env) resilience.Policy[int] {
		clk := env.Clock()
		b := breaker.New(breaker.WithThreshold(5), breaker.WithCooldown(time.Second), breaker.WithClock(clk))
		env.Watch(b)
		budget := retry.NewBudget(retry.BudgetConfig{Ratio: 0.2, MinPerSecond: 5, Window: 5 * time.Second, Clock: clk})
		return resilience.Then(
			// WithMaxRefusalWait(Off): the retry waits out the breaker's
			// cooldown, so that some calls fail after it (every outcome).
			retry.New[int](retry.WithAttempts(3), retry.WithBudget(budget), retry.WithClock(clk), retry.WithMaxRefusalWait(resilience.Off),
				retry.WithBackoff(backoff.Exponential(20*time.Millisecond, 2, time.Second).WithJitter(backoff.Decorrelated).WithRand(env.Rand()))),
			breaker.Policy[int](b),
			ratelimit.WaitPolicy[int](ratelimit.New(500, 20, ratelimit.WithClock(clk), ratelimit.WithMaxWait(50*time.Millisecond))),
			timeout.New[int](200*time.Millisecond, timeout.WithClock(clk)),
		)
	}}
	return s, set
}

// TestDeterministic runs the same scenario, policy set and seed again, on
// one processor and on all: the results are the same, to the last bucket.
// Another seed gives another result.
func TestDeterministic(t *testing.T) {
	s, set := collapseLike(7)
	first := Run(s, set)
	if first.Successes == 0 || first.Refused == 0 || first.Failures == 0 || first.Overloaded+first.ServerCalls == 0 {
		t.Fatalf("%+v: want a run with successes, refusals and failures", first.Totals)
	}
	prev := runtime.GOMAXPROCS(1)
	again := Run(s, set)
	runtime.GOMAXPROCS(prev)
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("same seed on one processor, different result (-first +again):\n%s", diff)
	}
	if diff := cmp.Diff(first, Run(s, set)); diff != "" {
		t.Errorf("same seed, different result (-first +again):\n%s", diff)
	}
	s.Seed = 8
	if other := Run(s, set); cmp.Equal(first.Series, other.Series) {
		t.Errorf("seeds 7 and 8 give the same series")
	}
}

func TestWatch(t *testing.T) {
	r := Run(Scenario{Duration: 10 * time.Second, Bucket: time.Second,
		Server:  Server{Outages: []Outage{{Start: 3 * time.Second, End: 5 * time.Second, Mode: Down}}},
		Clients: []Clients{{Think: 10 * time.Millisecond}}},
		PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
			b := breaker.New(breaker.WithThreshold(3), breaker.WithCooldown(3500*time.Millisecond), breaker.WithClock(env.Clock()))
			env.Watch(b)
			return breaker.Policy[int](b)
		}})
	// Trips at 3s, half-open at 6.5s, the trial closes it at once.
	c, o := breaker.Closed, breaker.Open
	want := []breaker.State{c, c, c, o, o, o, c, c, c, c}
	if diff := cmp.Diff(want, r.Breaker); diff != "" {
		t.Errorf("breaker series mismatch (-want +got):\n%s", diff)
	}
	if r := Run(Scenario{Clients: []Clients{{Calls: 1}}}, PolicySet[int]{Build: identity}); r.Breaker != nil {
		t.Errorf("no breaker watched, but a series: %v", r.Breaker)
	}
}

func TestEnvRand(t *testing.T) {
	draw := func(seed uint64) uint64 {
		var v uint64
		Run(Scenario{Seed: seed, Clients: []Clients{{Calls: 1}}}, PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
			v = env.Rand().Uint64()
			return resilience.Policy[int]{}
		}})
		return v
	}
	if a, b, c := draw(1), draw(1), draw(2); a != b || a == c {
		t.Errorf("Env.Rand is not seeded by the scenario's seed")
	}
}

func TestWindowAndAmplification(t *testing.T) {
	r := &Result{Bucket: time.Second, Series: []Totals{{Calls: 1, ServerCalls: 3}, {Calls: 2, ServerCalls: 2}, {Calls: 4, ServerCalls: 4}}}
	if diff := cmp.Diff(Totals{Calls: 3, ServerCalls: 5}, r.Window(0, 2*time.Second)); diff != "" {
		t.Errorf("Window mismatch (-want +got):\n%s", diff)
	}
	if got := r.Window(time.Second, time.Hour).Amplification(); got != 1 {
		t.Errorf("Amplification = %v, want 1", got)
	}
	if got := (Totals{}).Amplification(); got != 0 {
		t.Errorf("Amplification of no calls = %v, want 0", got)
	}
	if got := r.Window(0, 2*time.Second).Amplification(); math.Abs(got-5.0/3) > 1e-12 {
		t.Errorf("Amplification = %v, want 5/3", got)
	}
}

func TestValidate(t *testing.T) {
	ok := Clients{N: 1}
	for _, c := range []struct {
		s    Scenario
		want string
	}{
		{Scenario{Duration: -1, Clients: []Clients{ok}}, "sim: Scenario.Duration must be >= 0, got -1ns"},
		{Scenario{Bucket: -1, Clients: []Clients{ok}}, "sim: Scenario.Bucket must be >= 0, got -1ns"},
		{Scenario{}, "sim: Scenario.Clients must have at least one group, got none"},
		{Scenario{Clients: []Clients{{N: -1}}}, "sim: Scenario.Clients[0].N must be >= 0, got -1"},
		{Scenario{Clients: []Clients{ok, {Think: -1}}}, "sim: Scenario.Clients[1] times must be >= 0"},
		{Scenario{Clients: []Clients{{Calls: -2}}}, "sim: Scenario.Clients[0].Calls must be >= 0, got -2"},
		{Scenario{Server: Server{Base: -1}, Clients: []Clients{ok}}, "sim: Server.Base must be >= 0, got -1ns"},
		{Scenario{Server: Server{Slope: -1}, Clients: []Clients{ok}}, "sim: Server.Slope must be >= 0, got -1ns"},
		{Scenario{Server: Server{Noise: -1}, Clients: []Clients{ok}}, "sim: Server.Noise must be >= 0, got -1ns"},
		{Scenario{Server: Server{Capacity: -1}, Clients: []Clients{ok}}, "sim: Server.Capacity must be >= 0, got -1"},
		{Scenario{Server: Server{Slow: 1.5, SlowLatency: 1}, Clients: []Clients{ok}}, "sim: Server.Slow must be in [0, 1], got 1.5"},
		{Scenario{Server: Server{Slow: math.NaN(), SlowLatency: 1}, Clients: []Clients{ok}}, "sim: Server.Slow must be in [0, 1], got NaN"},
		{Scenario{Server: Server{Slow: 0.1}, Clients: []Clients{ok}}, "sim: Server.SlowLatency must be > 0 with Slow 0.1, got 0s"},
		{Scenario{Server: Server{SlowLatency: -1}, Clients: []Clients{ok}}, "sim: Server.SlowLatency must be >= 0, got -1ns"},
		{Scenario{Server: Server{Outages: []Outage{{Start: 2, End: 1}}}, Clients: []Clients{ok}}, "sim: Server.Outages[0] needs 0 <= Start <= End, got Start 2ns, End 1ns"},
		{Scenario{Server: Server{Outages: []Outage{{Mode: 7}}}, Clients: []Clients{ok}}, "sim: Server.Outages[0].Mode must be Down or Hang, got 7"},
	} {
		err := c.s.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Validate = %v, want %q", err, c.want)
		}
		wantPanic(t, c.want, func() { Run(c.s, PolicySet[int]{Build: identity}) })
	}
	if err := (Scenario{Clients: []Clients{{}}}).Validate(); err != nil {
		t.Errorf("Validate of a minimal scenario = %v, want nil", err)
	}
	wantPanic(t, "sim: PolicySet.Build must not be nil (policy set x)", func() { Run(Scenario{Clients: []Clients{ok}}, PolicySet[int]{Name: "x"}) })
}

func TestOutageModeString(t *testing.T) {
	if diff := cmp.Diff([]string{"down", "hang", "OutageMode(5)"}, []string{Down.String(), Hang.String(), OutageMode(5).String()}); diff != "" {
		t.Errorf("String mismatch (-want +got):\n%s", diff)
	}
}

// TestRetryAmplifies checks the amplification factor against a server that
// is down for good: every call makes its 3 attempts.
func TestRetryAmplifies(t *testing.T) {
	r := Run(Scenario{Server: Server{Outages: []Outage{{End: time.Hour, Mode: Down}}}, Clients: []Clients{{N: 10, Calls: 10}}},
		PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
			return retry.New[int](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(time.Millisecond)), retry.WithClock(env.Clock()))
		}})
	if r.Calls != 100 || r.Failures != 100 || r.ServerCalls != 300 || r.Amplification() != 3 {
		t.Errorf("%+v, amplification %v; want 100 failed calls, 300 server calls, 3", r.Totals, r.Amplification())
	}
}

// TestLatency checks the client calls' latencies: one per call, each from
// the start of the call to its end, and the nearest-rank quantiles.
func TestLatency(t *testing.T) {
	// One client, 4 calls one after the other, of 10ms, 20ms, 30ms and
	// 40ms: a layer that waits 10ms more at each call.
	n := 0
	r := Run(Scenario{Duration: time.Minute, Server: Server{Base: time.Nanosecond}, Clients: []Clients{{Calls: 4}}},
		PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
			clk := env.Clock()
			return resilience.New("wait", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				n++
				if err := clk.Sleep(ctx, time.Duration(n)*10*time.Millisecond); err != nil {
					return 0, err
				}
				return next.Call(ctx)
			})
		}})
	ms := time.Millisecond
	want := []time.Duration{10*ms + 1, 20*ms + 1, 30*ms + 1, 40*ms + 1}
	if diff := cmp.Diff(want, r.Latencies); diff != "" {
		t.Fatalf("latencies mismatch (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0, want[0]}, {0.25, want[0]}, {0.26, want[1]}, {0.5, want[1]}, {0.75, want[2]}, {0.99, want[3]}, {1, want[3]}} {
		if got := r.Latency(c.q); got != c.want {
			t.Errorf("Latency(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := (&Result{}).Latency(0.5); got != 0 {
		t.Errorf("Latency of no calls = %v, want 0", got)
	}
	wantPanic(t, "sim: Result.Latency(1.5): q must be in [0, 1]", func() { r.Latency(1.5) })
	if got := r.SuccessRate(); got != 1 {
		t.Errorf("SuccessRate = %v, want 1", got)
	}
	if got := (Totals{Calls: 4, Successes: 1}).SuccessRate(); got != 0.25 {
		t.Errorf("SuccessRate of 1 in 4 = %v, want 0.25", got)
	}
	if got := (Totals{}).SuccessRate(); got != 0 {
		t.Errorf("SuccessRate of no calls = %v, want 0", got)
	}
}

// Calls still in progress when the run ends (here: hung on a server that
// never answers, with no timeout) are counted as Unfinished, in the last
// bucket, and in neither Calls nor the latencies.
func TestUnfinishedCallsAreCounted(t *testing.T) {
	r := Run(Scenario{
		Duration: 3 * time.Second,
		Server:   Server{Outages: []Outage{{Start: time.Second, End: 2 * time.Second, Mode: Hang}}},
		Clients:  []Clients{{N: 3}},
	}, PolicySet[int]{Name: "none", Build: func(*Env) resilience.Policy[int] { return resilience.Policy[int]{} }})
	if r.Unfinished != 3 {
		t.Errorf("Unfinished = %d, want 3 (every client hangs from 1s to the end)", r.Unfinished)
	}
	if got := r.Series[len(r.Series)-1].Unfinished; got != 3 {
		t.Errorf("last bucket's Unfinished = %d, want 3", got)
	}
	if len(r.Latencies) != r.Calls {
		t.Errorf("%d latencies for %d calls: an unfinished call has no latency", len(r.Latencies), r.Calls)
	}
}
