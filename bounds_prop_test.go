package resilience_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencetest"
)

// drawMillis draws a duration of lo to hi whole milliseconds.
func drawMillis(t *rapid.T, lo, hi int, label string) time.Duration {
	return time.Duration(rapid.IntRange(lo, hi).Draw(t, label)) * time.Millisecond
}

// drawLayer draws one layer (retry, timeout, hedge or breaker; or a
// bulkhead or a waiting rate limiter, with their waits bounded) with random
// settings, on clk.
func drawLayer(t *rapid.T, clk *clock.Fake, i int) resilience.Policy[int] {
	label := func(s string) string { return fmt.Sprintf("layer %d %s", i, s) }
	switch rapid.SampledFrom([]string{"retry", "timeout", "hedge", "breaker", "bulkhead", "ratelimit"}).Draw(t, label("kind")) {
	case "retry":
		opts := []retry.Option{retry.WithClock(clk), retry.WithRand(rand.New(rand.NewPCG(uint64(i), 1)))}
		switch rapid.IntRange(0, 2).Draw(t, label("backoff")) {
		case 0:
			opts = append(opts, retry.WithBackoff(backoff.Constant(drawMillis(t, 0, 100, label("wait")))))
		case 1:
			opts = append(opts, retry.WithBackoff(backoff.Exponential(drawMillis(t, 1, 50, label("base")), 2, drawMillis(t, 50, 400, label("max"))).WithJitter(backoff.Full)))
		}
		if rapid.Bool().Draw(t, label("maxElapsed?")) {
			opts = append(opts, retry.WithMaxElapsed(drawMillis(t, 1, 1000, label("maxElapsed"))))
			if rapid.Bool().Draw(t, label("attempts off?")) {
				opts = append(opts, retry.WithAttempts(resilience.Off), retry.WithBackoff(backoff.Constant(drawMillis(t, 1, 100, label("wait off")))))
			}
		}
		if n := rapid.IntRange(0, 4).Draw(t, label("attempts")); n > 0 {
			opts = append(opts, retry.WithAttempts(n))
		}
		if rapid.Bool().Draw(t, label("maxWait?")) {
			opts = append(opts, retry.WithMaxWait(drawMillis(t, 1, 300, label("maxWait"))))
		}
		if rapid.Bool().Draw(t, label("maxRefusalWait off?")) {
			opts = append(opts, retry.WithMaxRefusalWait(resilience.Off))
		}
		return retry.New[int](opts...)
	case "timeout":
		return timeout.New[int](drawMillis(t, 1, 300, label("timeout")), timeout.WithClock(clk),
			timeout.WithAbandon(rapid.Bool().Draw(t, label("abandon"))))
	case "hedge":
		opts := []hedge.Option{hedge.WithClock(clk), hedge.WithMaxHedges(rapid.IntRange(1, 3).Draw(t, label("hedges")))}
		if rapid.Bool().Draw(t, label("hedge maxWait?")) {
			opts = append(opts, hedge.WithMaxWait(drawMillis(t, 1, 300, label("hedge maxWait"))))
		}
		if rapid.Bool().Draw(t, label("quantile?")) {
			opts = append(opts, hedge.WithQuantile(0.9))
		}
		return hedge.New[int](drawMillis(t, 1, 100, label("delay")), opts...)
	case "bulkhead":
		// One slot: the copies of a hedge outside it queue for it.
		opts := []bulkhead.Option{bulkhead.WithClock(clk)}
		if rapid.Bool().Draw(t, label("queue?")) {
			opts = append(opts, bulkhead.WithMaxQueue(4), bulkhead.WithMaxWait(drawMillis(t, 1, 200, label("queue wait"))))
		}
		return bulkhead.Policy[int](bulkhead.New(1, opts...))
	case "ratelimit":
		l := ratelimit.New(float64(rapid.IntRange(1, 50).Draw(t, label("rate"))), rapid.IntRange(1, 3).Draw(t, label("burst")),
			ratelimit.WithClock(clk), ratelimit.WithMaxWait(drawMillis(t, 1, 200, label("token wait"))))
		return ratelimit.WaitPolicy[int](l)
	default:
		return breaker.Policy[int](breaker.New(breaker.WithClock(clk),
			breaker.WithThreshold(rapid.IntRange(1, 5).Draw(t, label("threshold"))),
			breaker.WithCooldown(drawMillis(t, 1, 200, label("cooldown")))))
	}
}

// drawFault draws what the fake dependency does; a hang only when hang is
// allowed (the pipeline bounds the duration).
func drawFault(t *rapid.T, clk *clock.Fake, hang bool) resiliencetest.Fault {
	kinds := []string{"healthy", "fail", "fail-rate", "retry-after", "slow", "slow and failing"}
	if hang {
		kinds = append(kinds, "hang")
	}
	seed := rapid.Uint64().Draw(t, "seed")
	switch rapid.SampledFrom(kinds).Draw(t, "fault") {
	case "fail":
		return resiliencetest.Fail(nil)
	case "fail-rate":
		return resiliencetest.FailRate(rapid.Float64Range(0, 1).Draw(t, "rate"), seed)
	case "retry-after":
		return resiliencetest.RetryAfter(drawMillis(t, 0, 500, "hint"))
	case "slow":
		return resiliencetest.Delay(clk, resiliencetest.Uniform(0, drawMillis(t, 1, 400, "latency"), seed))
	case "slow and failing":
		return resiliencetest.Chain(resiliencetest.Delay(clk, resiliencetest.Uniform(0, drawMillis(t, 1, 400, "latency"), seed)),
			resiliencetest.FailRate(rapid.Float64Range(0, 1).Draw(t, "rate"), seed))
	case "hang":
		return resiliencetest.Hang()
	}
	return resiliencetest.Healthy()
}

// Random pipelines of retries, timeouts, hedges and breakers (and
// bulkheads and rate limiters that wait), in any
// order, called a few times against a faulty dependency on a fake clock:
// no call makes more calls to the dependency, or takes longer in virtual
// time, than Bounds says.
func TestBoundsHoldOnRandomPipelines(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		clk := clock.NewFake()
		n := rapid.IntRange(1, 4).Draw(t, "layers")
		var ps []resilience.Policy[int]
		for i := range n {
			ps = append(ps, drawLayer(t, clk, i))
		}
		p := resilience.Then(ps...)
		b := p.Bounds()
		dep := resiliencetest.NewDependency(1, drawFault(t, clk, b.DurationUnbounded == ""))
		for call := range rapid.IntRange(1, 3).Draw(t, "calls") {
			before := dep.Calls()
			start := clk.Now()
			var took time.Duration
			err := resiliencetest.Drive(clk, time.Millisecond, func() {
				_, _ = p.Do(context.Background(), dep.Call)
				took = clk.Now().Sub(start)
			})
			if err != nil {
				t.Fatalf("call %d through %s: %v", call, p, err)
			}
			calls := dep.Calls() - before
			if b.CallsUnbounded == "" && calls > int64(b.Calls) {
				t.Fatalf("call %d through %s called the dependency %d times, more than Bounds %v", call, p, calls, b)
			}
			if b.DurationUnbounded == "" && took > b.Duration {
				t.Fatalf("call %d through %s took %v, longer than Bounds %v", call, p, took, b)
			}
			clk.Advance(drawMillis(t, 0, 300, "pause"))
		}
	})
}

// A hedge's second attempt that queues for the one slot of a bulkhead
// inside it waits for the first to end: the bulkhead's MaxWait is in the
// bound (1 × (1ms + 1ms) + 150ms + 100ms), and the call, against a
// dependency that hangs, takes 200ms.
func TestBoundsHedgeQueuedForBulkhead(t *testing.T) {
	clk := clock.NewFake()
	p := resilience.Then(
		hedge.New[int](time.Millisecond, hedge.WithClock(clk)),
		bulkhead.Policy[int](bulkhead.New(1, bulkhead.WithMaxQueue(1), bulkhead.WithMaxWait(150*time.Millisecond), bulkhead.WithClock(clk))),
		timeout.New[int](100*time.Millisecond, timeout.WithClock(clk)),
	)
	b := p.Bounds()
	if want := (resilience.Bounds{Calls: 2, Duration: 252 * time.Millisecond}); b != want {
		t.Fatalf("Bounds(%s) = %v, want %v", p, b, want)
	}
	dep := resiliencetest.NewDependency(1, resiliencetest.Hang())
	start := clk.Now()
	var took time.Duration
	if err := resiliencetest.Drive(clk, time.Millisecond, func() {
		_, _ = p.Do(context.Background(), dep.Call)
		took = clk.Now().Sub(start)
	}); err != nil {
		t.Fatal(err)
	}
	if calls := dep.Calls(); calls != 2 || took != 200*time.Millisecond {
		t.Errorf("the call made %d calls in %v, want 2 in 200ms (within %v)", calls, took, b)
	}
}
