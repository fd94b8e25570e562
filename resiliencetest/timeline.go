package resiliencetest

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// Step is one phase of a [Timeline]: from At, the time since the timeline
// started, calls get Fault, until the next step's At. The zero Step is a
// healthy phase from the start.
type Step struct {
	At    time.Duration // start of the phase, since the timeline's start; >= 0
	Fault Fault         // what calls in the phase get; the zero Fault is Healthy
}

// Timeline returns a fault that scripts an outage in time: a call gets the
// fault of the last step whose At has passed when the call arrives, measured
// on clk from the moment Timeline is called; before the first step's At a
// call is healthy, and the last step lasts for good. For example, healthy
// for 10 s, failing for 10 s, hanging for 10 s, then recovered:
//
//	Timeline(clk,
//		Step{At: 0, Fault: Healthy()},
//		Step{At: 10 * time.Second, Fault: Fail(nil)},
//		Step{At: 20 * time.Second, Fault: Hang()},
//		Step{At: 30 * time.Second, Fault: Healthy()})
//
// Give it the clock.Fake the pipeline under test runs on, and the outage
// plays out as the test advances it. A nil clk means clock.Real(). Timeline
// panics if a step's At is negative or before the previous step's.
func Timeline(clk clock.Clock, steps ...Step) Fault {
	if clk == nil {
		clk = clock.Real()
	}
	steps = append([]Step(nil), steps...)
	desc := make([]string, len(steps))
	for i, s := range steps {
		if s.At < 0 || (i > 0 && s.At < steps[i-1].At) {
			panic(fmt.Sprintf("resiliencetest: Timeline step %d At must be >= 0 and >= the previous step's, got %v", i, s.At))
		}
		desc[i] = s.At.String() + " " + s.Fault.String()
	}
	start := clk.Now()
	return Fault{name: "timeline(" + strings.Join(desc, ", ") + ")", inject: func(ctx context.Context) error {
		elapsed := clk.Now().Sub(start)
		var f Fault
		for _, s := range steps {
			if s.At > elapsed {
				break
			}
			f = s.Fault
		}
		return f.Inject(ctx)
	}}
}

// Sequence returns a fault that scripts calls by their number: the first
// call to arrive gets faults[0], the second faults[1], and so on; calls past
// the end get the last fault. For example Sequence(Fail(nil), Fail(nil),
// Healthy()) fails twice, then succeeds for good. Calls are numbered in the
// order they arrive, atomically, and every copy of the fault shares the
// count. Sequence() is Healthy.
func Sequence(faults ...Fault) Fault {
	faults = append([]Fault(nil), faults...)
	if len(faults) == 0 {
		return Fault{}
	}
	var n atomic.Uint64
	last := uint64(len(faults) - 1)
	return Fault{name: "sequence(" + names(faults) + ")", inject: func(ctx context.Context) error {
		return faults[min(n.Add(1)-1, last)].Inject(ctx)
	}}
}
