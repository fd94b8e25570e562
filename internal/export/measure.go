package export

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
)

// Recorder is what an exporter does with what the layers of a [Measure]
// see. Its methods are called on the goroutine of the call, after it
// returns, and may be called by many goroutines at once.
type Recorder interface {
	// Call records a call through the Call layer: its outcome
	// ([OutcomeOf] its context and error), duration and error.
	Call(ctx context.Context, outcome string, d time.Duration, err error)
	// Attempt records an attempt through the Attempt layer: its number
	// (1 for a call's first, bounded by Measure's attempts; 0 without a
	// Call layer around it), outcome, duration and error.
	Attempt(ctx context.Context, attempt int, outcome string, d time.Duration, err error)
}

// Measure returns the Call and Attempt layers, named "measure(name)" and
// "measure-attempt(name)", that time calls and attempts on clk and report
// them to r. The Call layer counts its call's attempts in a small context
// (one allocation per call) that the Attempt layers inside it find, so
// nested Measures each count their own; attempts past attempts are
// reported as attempt number attempts. Measure does not check its
// arguments: the exporters do, with their own messages; attempts must be
// >= 1.
func Measure[T any](clk clock.Clock, name string, attempts int, r Recorder) (call, attempt resilience.Policy[T]) {
	ms := &measure{}
	call = resilience.New("measure("+name+")", func(ctx context.Context, next resilience.Next[T]) (T, error) {
		start := clk.Now()
		v, err := next.Call(&callContext{Context: ctx, owner: ms})
		r.Call(ctx, OutcomeOf(ctx, err), clk.Now().Sub(start), err)
		return v, err
	}).Describe(resilience.Layer{Kind: resilience.KindOther})
	attempt = resilience.New("measure-attempt("+name+")", func(ctx context.Context, next resilience.Next[T]) (T, error) {
		n := 0
		if c, ok := ctx.Value(ms).(*callContext); ok {
			n = min(int(c.attempts.Add(1)), attempts)
		}
		start := clk.Now()
		v, err := next.Call(ctx)
		r.Attempt(ctx, n, OutcomeOf(ctx, err), clk.Now().Sub(start), err)
		return v, err
	}).Describe(resilience.Layer{Kind: resilience.KindOther})
	return call, attempt
}

// measure is the identity of one Measure's layers: the key under which
// its Call layer's context is found.
type measure struct{ _ byte } // not zero-sized, so that each is a distinct pointer

// callContext is the context of a call through a Measure's Call layer: it
// counts the call's attempts for the Attempt layer, which finds it under
// the measure's pointer.
type callContext struct {
	context.Context
	owner    *measure
	attempts atomic.Int32
}

func (c *callContext) Value(k any) any {
	if k == any(c.owner) {
		return c
	}
	return c.Context.Value(k)
}
