package resiliencetest

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// Latency is a distribution of latencies, for [Delay]. Make one with
// [Fixed], [Uniform] or [Exponential]. The zero Latency is Fixed(0). A
// Latency is safe for simultaneous use; the seeded ones share their random
// source between copies.
type Latency struct {
	name string
	draw func() time.Duration
}

// Draw returns one latency from l, never negative.
func (l Latency) Draw() time.Duration {
	if l.draw == nil {
		return 0
	}
	return l.draw()
}

// String describes l, for example "fixed(10ms)" or "exponential(20ms, seed 1)".
func (l Latency) String() string {
	if l.name == "" {
		return "fixed(0s)"
	}
	return l.name
}

// GoString is String.
func (l Latency) GoString() string { return l.String() }

// Fixed returns the latency that is always d. It panics if d < 0.
func Fixed(d time.Duration) Latency {
	if d < 0 {
		panic(fmt.Sprintf("resiliencetest: Fixed latency must be >= 0, got %v", d))
	}
	return Latency{name: "fixed(" + d.String() + ")", draw: func() time.Duration { return d }}
}

// Uniform returns latencies uniform in [lo, hi], drawn from a source seeded
// with seed. It panics if lo < 0 or hi < lo.
func Uniform(lo, hi time.Duration, seed uint64) Latency {
	if lo < 0 || hi < lo {
		panic(fmt.Sprintf("resiliencetest: Uniform needs 0 <= lo <= hi, got lo %v, hi %v", lo, hi))
	}
	src := newSource(seed)
	return Latency{name: fmt.Sprintf("uniform(%v, %v, seed %d)", lo, hi, seed), draw: func() time.Duration {
		return min(lo+time.Duration(src.float64()*float64(hi-lo+1)), hi)
	}}
}

// Exponential returns latencies exponentially distributed with the given
// mean, drawn from a source seeded with seed: most calls are fast and a few
// are many times slower, as a real dependency's tail is. Latencies are
// capped at 1000 × mean. It panics if mean < 0.
func Exponential(mean time.Duration, seed uint64) Latency {
	if mean < 0 {
		panic(fmt.Sprintf("resiliencetest: Exponential mean must be >= 0, got %v", mean))
	}
	src := newSource(seed)
	return Latency{name: fmt.Sprintf("exponential(%v, seed %d)", mean, seed), draw: func() time.Duration {
		// 1-u is in (0, 1], so the logarithm is finite.
		x := -math.Log(1-src.float64()) * float64(mean)
		return time.Duration(min(x, 1000*float64(mean)))
	}}
}

// Delay returns a fault that makes each call wait a latency drawn from l,
// on clk, and then succeed: a slow dependency. If ctx ends first, the call
// fails with ctx's error at once. Chain it with another fault for a slow
// dependency that also fails: Chain(Delay(clk, l), FailRate(0.1, seed)). A
// nil clk means clock.Real().
func Delay(clk clock.Clock, l Latency) Fault {
	if clk == nil {
		clk = clock.Real()
	}
	return Fault{name: "delay(" + l.String() + ")", inject: func(ctx context.Context) error {
		return clk.Sleep(ctx, l.Draw())
	}}
}
