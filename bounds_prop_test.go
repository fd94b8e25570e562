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
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencetest"
)

// drawMillis draws a duration of lo to hi whole milliseconds.
func drawMillis(t *rapid.T, lo, hi int, label string) time.Duration {
	return time.Duration(rapid.IntRange(lo, hi).Draw(t, label)) * time.Millisecond
}

// drawLayer draws one layer (retry, timeout, hedge or breaker) with random
// settings, on clk.
func drawLayer(t *rapid.T, clk *clock.Fake, i int) resilience.Policy[int] {
	label := func(s string) string { return fmt.Sprintf("layer %d %s", i, s) }
	switch rapid.SampledFrom([]string{"retry", "timeout", "hedge", "breaker"}).Draw(t, label("kind")) {
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
		opts := []hedge.Option[int]{hedge.WithClock(clk), hedge.WithMaxHedges(rapid.IntRange(1, 3).Draw(t, label("hedges")))}
		if rapid.Bool().Draw(t, label("hedge maxWait?")) {
			opts = append(opts, hedge.WithMaxWait(drawMillis(t, 1, 300, label("hedge maxWait"))))
		}
		return hedge.New[int](drawMillis(t, 1, 100, label("delay")), opts...)
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

// Random pipelines of retries, timeouts, hedges and breakers, in any
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
