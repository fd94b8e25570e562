package resiliencetest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencetest"
)

// pipelineCase is a small pipeline (retry, with seeded jitter or none,
// breaker, timeout, hedge, bulkhead, outermost first, each optional) over a
// dependency with a fault, called a few times in a row with a pause between
// calls.
type pipelineCase struct {
	Attempts     int           // retry; 0: none
	RetryWait    time.Duration // retry's constant backoff
	JitterSeed   uint64        // full jitter drawn with WithRand from this seed; 0: no jitter
	Threshold    int           // breaker; 0: none
	Cooldown     time.Duration
	Timeout      time.Duration // 0: none
	HedgeDelay   time.Duration // 0: no hedge
	Hedges       int
	Bulkhead     int // slots; 0: none
	BulkheadWait time.Duration
	Fault        faultSpec
	Calls        int
	Pause        time.Duration
}

// faultSpec builds the same fault, with the same seeds, for each run.
type faultSpec struct {
	Name  string
	build func(clk clock.Clock) resiliencetest.Fault
}

func (f faultSpec) String() string { return f.Name }

func drawMillis(t *rapid.T, lo, hi int, label string) time.Duration {
	return time.Duration(rapid.IntRange(lo, hi).Draw(t, label)) * time.Millisecond
}

func drawFault(t *rapid.T, label string, depth int) faultSpec {
	kinds := 8
	if depth > 0 {
		kinds = 6 // no nesting below one level
	}
	switch rapid.IntRange(0, kinds-1).Draw(t, label) {
	case 0:
		return faultSpec{"healthy", func(clock.Clock) resiliencetest.Fault { return resiliencetest.Healthy() }}
	case 1:
		return faultSpec{"fail", func(clock.Clock) resiliencetest.Fault { return resiliencetest.Fail(nil) }}
	case 2:
		rate, seed := rapid.Float64Range(0, 1).Draw(t, label+".rate"), rapid.Uint64().Draw(t, label+".seed")
		return faultSpec{fmt.Sprintf("fail-rate(%v, %d)", rate, seed), func(clock.Clock) resiliencetest.Fault { return resiliencetest.FailRate(rate, seed) }}
	case 3:
		d := drawMillis(t, 0, 100, label+".after")
		return faultSpec{fmt.Sprintf("retry-after(%v)", d), func(clock.Clock) resiliencetest.Fault { return resiliencetest.RetryAfter(d) }}
	case 4:
		d := drawMillis(t, 0, 200, label+".delay")
		return faultSpec{fmt.Sprintf("delay(%v)", d), func(c clock.Clock) resiliencetest.Fault {
			return resiliencetest.Delay(c, resiliencetest.Fixed(d))
		}}
	case 5:
		lo := drawMillis(t, 0, 100, label+".lo")
		hi := lo + drawMillis(t, 0, 100, label+".hi")
		seed := rapid.Uint64().Draw(t, label+".seed")
		return faultSpec{fmt.Sprintf("delay(uniform(%v, %v, %d))", lo, hi, seed), func(c clock.Clock) resiliencetest.Fault {
			return resiliencetest.Delay(c, resiliencetest.Uniform(lo, hi, seed))
		}}
	case 6:
		a, b := drawFault(t, label+".first", depth+1), drawFault(t, label+".then", depth+1)
		return faultSpec{"chain(" + a.Name + ", " + b.Name + ")", func(c clock.Clock) resiliencetest.Fault {
			return resiliencetest.Chain(a.build(c), b.build(c))
		}}
	default:
		fs := []faultSpec{drawFault(t, label+".1", depth+1), drawFault(t, label+".2", depth+1), {"hang", func(clock.Clock) resiliencetest.Fault { return resiliencetest.Hang() }}}
		names := make([]string, len(fs))
		for i, f := range fs {
			names[i] = f.Name
		}
		return faultSpec{"sequence(" + strings.Join(names, ", ") + ")", func(c clock.Clock) resiliencetest.Fault {
			built := make([]resiliencetest.Fault, len(fs))
			for i, f := range fs {
				built[i] = f.build(c)
			}
			return resiliencetest.Sequence(built...)
		}}
	}
}

func drawPipelineCase(t *rapid.T) pipelineCase {
	var c pipelineCase
	if rapid.Bool().Draw(t, "retry") {
		c.Attempts = rapid.IntRange(1, 4).Draw(t, "attempts")
		c.RetryWait = drawMillis(t, 1, 100, "retryWait")
		if rapid.Bool().Draw(t, "jitter") {
			c.JitterSeed = rapid.Uint64Min(1).Draw(t, "jitterSeed")
		}
	}
	if rapid.Bool().Draw(t, "breaker") {
		c.Threshold = rapid.IntRange(1, 3).Draw(t, "threshold")
		c.Cooldown = drawMillis(t, 1, 500, "cooldown")
	}
	if rapid.Bool().Draw(t, "timeout") {
		c.Timeout = drawMillis(t, 1, 300, "timeout")
	}
	if rapid.Bool().Draw(t, "hedge") {
		c.HedgeDelay = drawMillis(t, 1, 100, "hedgeDelay")
		c.Hedges = rapid.IntRange(1, 2).Draw(t, "hedges")
	}
	if rapid.Bool().Draw(t, "bulkhead") {
		c.Bulkhead = rapid.IntRange(1, 2).Draw(t, "slots")
		c.BulkheadWait = drawMillis(t, 1, 100, "bulkheadWait")
	}
	c.Fault = drawFault(t, "fault", 0)
	if c.Timeout == 0 && strings.Contains(c.Fault.Name, "hang") {
		c.Timeout = drawMillis(t, 1, 300, "timeoutForHang") // a hang needs a timeout to end
	}
	c.Calls = rapid.IntRange(1, 3).Draw(t, "calls")
	if c.HedgeDelay > 0 {
		// An attempt that the winner's return hands a bulkhead slot, or
		// that starts just as the winner returns, races the hedge's
		// cancellation in the pipeline itself, between two moves of the
		// clock: whether it reaches the dependency is the schedule's
		// choice, and so are the faults later calls draw after it. One call
		// then, and its outcome and instant only.
		c.Calls = 1
	}
	c.Pause = drawMillis(t, 0, 300, "pause")
	return c
}

// callOutcome is one driven call: its error, the instant it returned
// (virtual time since the run began) and the calls that reached the
// dependency so far.
type callOutcome struct {
	Err   string
	At    time.Duration
	Calls int64
}

// run builds the case's pipeline afresh, on a fresh fake, and drives its
// calls.
func (c pipelineCase) run() ([]callOutcome, error) {
	fake := clock.NewFake()
	start := fake.Now()
	var layers []resilience.Policy[int]
	if c.Attempts > 0 {
		opts := []retry.Option{retry.WithAttempts(c.Attempts), retry.WithBackoff(backoff.Constant(c.RetryWait)), retry.WithClock(fake)}
		if c.JitterSeed != 0 {
			opts = append(opts, retry.WithBackoff(backoff.Constant(c.RetryWait).WithJitter(backoff.Full)),
				retry.WithRand(rand.New(rand.NewPCG(c.JitterSeed, 0))))
		}
		layers = append(layers, retry.New[int](opts...))
	}
	if c.Threshold > 0 {
		b := breaker.New(breaker.WithThreshold(c.Threshold), breaker.WithCooldown(c.Cooldown), breaker.WithClock(fake))
		layers = append(layers, breaker.Policy[int](b))
	}
	if c.Timeout > 0 {
		layers = append(layers, timeout.New[int](c.Timeout, timeout.WithClock(fake)))
	}
	if c.HedgeDelay > 0 {
		layers = append(layers, hedge.New[int](c.HedgeDelay, hedge.WithMaxHedges(c.Hedges), hedge.WithClock(fake)))
	}
	if c.Bulkhead > 0 {
		b := bulkhead.New(c.Bulkhead, bulkhead.WithMaxQueue(4), bulkhead.WithMaxWait(c.BulkheadWait), bulkhead.WithClock(fake))
		layers = append(layers, bulkhead.Policy[int](b))
	}
	p := resilience.Then(layers...)
	dep := resiliencetest.NewDependency(1, c.Fault.build(fake))
	var out []callOutcome
	for i := range c.Calls {
		if i > 0 {
			fake.Advance(c.Pause)
		}
		var err error
		if derr := resiliencetest.Drive(fake, time.Millisecond, func() { _, err = p.Do(context.Background(), dep.Call) }); derr != nil {
			return out, derr
		}
		o := callOutcome{errString(err), fake.Now().Sub(start), dep.Calls()}
		if c.HedgeDelay > 0 {
			o.Calls = 0 // see drawPipelineCase
		}
		out = append(out, o)
	}
	return out, nil
}

// The same small pipeline, with the same faults and seeds, driven five
// times, returns the same outcomes at the same virtual instants, with one
// processor and with four.
func TestDriveRandomPipelinesAreDeterministic(t *testing.T) {
	for _, procs := range []int{1, 4} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			rapid.Check(t, func(t *rapid.T) {
				c := drawPipelineCase(t)
				first, err := c.run()
				if err != nil {
					t.Fatalf("%+v: run 1: Drive = %v", c, err)
				}
				for run := 2; run <= 5; run++ {
					got, err := c.run()
					if err != nil {
						t.Fatalf("%+v: run %d: Drive = %v", c, run, err)
					}
					if diff := cmp.Diff(first, got); diff != "" {
						t.Fatalf("%+v: run %d differs from run 1 (-run 1 +run %d):\n%s", c, run, run, diff)
					}
				}
			})
		})
	}
}
