package rapidgen

import (
	"fmt"
	"slices"
	"time"

	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/resiliencetest"
)

// Kind is a kind of fault that [Fault] and [Timeline] may draw.
type Kind int

// The kinds of fault, in the order rapid shrinks towards: a failing case
// shrinks to healthier faults first.
const (
	Healthy    Kind = iota // resiliencetest.Healthy
	Fail                   // resiliencetest.FailRate, of rate 1 or a drawn rate
	RetryAfter             // resiliencetest.RetryAfter, a hint in [0, 10s]
	Delay                  // resiliencetest.Delay of a drawn Latency
	Hang                   // resiliencetest.Hang: only for pipelines with a timeout
	Panic                  // resiliencetest.Panic
)

// DefaultKinds are the kinds drawn when none are given: the faults that end
// by themselves, so that a pipeline without a timeout may meet them.
var DefaultKinds = []Kind{Healthy, Fail, RetryAfter, Delay}

// Fault returns a generator of faults of the given kinds (DefaultKinds if
// none), whose delays run on clk (nil means clock.Real()). Fault panics if
// a kind is unknown.
func Fault(clk clock.Clock, kinds ...Kind) *rapid.Generator[resiliencetest.Fault] {
	if len(kinds) == 0 {
		kinds = DefaultKinds
	}
	kinds = slices.Clone(kinds)
	slices.Sort(kinds)
	for _, k := range kinds {
		if k < Healthy || k > Panic {
			panic(fmt.Sprintf("rapidgen: Fault kind must be one of Healthy..Panic, got %d", k))
		}
	}
	return rapid.Custom(func(t *rapid.T) resiliencetest.Fault {
		return drawFault(t, clk, kinds)
	})
}

func drawFault(t *rapid.T, clk clock.Clock, kinds []Kind) resiliencetest.Fault {
	switch kinds[rapid.IntRange(0, len(kinds)-1).Draw(t, "kind")] {
	case Fail:
		rate := 1.0
		if rapid.Bool().Draw(t, "partial") {
			rate = float64(rapid.IntRange(1, 99).Draw(t, "percent")) / 100
		}
		return resiliencetest.FailRate(rate, rapid.Uint64().Draw(t, "seed"))
	case RetryAfter:
		return resiliencetest.RetryAfter(millis(t, 0, 10*time.Second, "hint"))
	case Delay:
		return resiliencetest.Delay(clk, Latency().Draw(t, "latency"))
	case Hang:
		return resiliencetest.Hang()
	case Panic:
		return resiliencetest.Panic("rapidgen: injected panic")
	}
	return resiliencetest.Healthy()
}

// Timeline returns a generator of outage timelines over span: a
// resiliencetest.Timeline on clk of 1 to 8 steps, the first at 0 and the
// others at drawn times within span, each with a fault of the given kinds
// (DefaultKinds if none). The timeline starts when it is drawn. Timeline
// panics if span < 0 or a kind is unknown.
func Timeline(clk clock.Clock, span time.Duration, kinds ...Kind) *rapid.Generator[resiliencetest.Fault] {
	if span < 0 {
		panic(fmt.Sprintf("rapidgen: Timeline span must be >= 0, got %v", span))
	}
	faults := Fault(clk, kinds...)
	return rapid.Custom(func(t *rapid.T) resiliencetest.Fault {
		return resiliencetest.Timeline(clk, drawSteps(t, span, faults)...)
	})
}

// drawSteps draws the steps of a Timeline over span.
func drawSteps(t *rapid.T, span time.Duration, faults *rapid.Generator[resiliencetest.Fault]) []resiliencetest.Step {
	n := rapid.IntRange(1, 8).Draw(t, "steps")
	ats := make([]time.Duration, n)
	for i := 1; i < n; i++ {
		ats[i] = millis(t, 0, span, "at")
	}
	slices.Sort(ats)
	steps := make([]resiliencetest.Step, n)
	for i := range steps {
		steps[i] = resiliencetest.Step{At: ats[i], Fault: faults.Draw(t, "fault")}
	}
	return steps
}

// Latency returns a generator of latency distributions of up to a second:
// fixed, uniform or exponential, seeded.
func Latency() *rapid.Generator[resiliencetest.Latency] {
	return rapid.Custom(func(t *rapid.T) resiliencetest.Latency {
		switch rapid.IntRange(0, 2).Draw(t, "distribution") {
		case 1:
			lo := millis(t, 0, time.Second, "lo")
			return resiliencetest.Uniform(lo, millis(t, lo, time.Second, "hi"), rapid.Uint64().Draw(t, "seed"))
		case 2:
			return resiliencetest.Exponential(millis(t, 0, 250*time.Millisecond, "mean"), rapid.Uint64().Draw(t, "seed"))
		}
		return resiliencetest.Fixed(millis(t, 0, time.Second, "latency"))
	})
}

// Duration returns a generator of durations in [lo, hi], in whole
// milliseconds when the range spans one, shrinking towards lo. It panics if
// hi < lo.
func Duration(lo, hi time.Duration) *rapid.Generator[time.Duration] {
	if hi < lo {
		panic(fmt.Sprintf("rapidgen: Duration needs lo <= hi, got lo %v, hi %v", lo, hi))
	}
	return rapid.Custom(func(t *rapid.T) time.Duration { return millis(t, lo, hi, "duration") })
}

// millis draws a duration in [lo, hi], in whole milliseconds above lo
// unless the range is shorter than one.
func millis(t *rapid.T, lo, hi time.Duration, label string) time.Duration {
	if hi-lo < time.Millisecond {
		return lo + time.Duration(rapid.Int64Range(0, int64(hi-lo)).Draw(t, label))
	}
	return lo + time.Duration(rapid.Int64Range(0, int64((hi-lo)/time.Millisecond)).Draw(t, label))*time.Millisecond
}
