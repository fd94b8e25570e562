package resilienceprom

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/f0b5b96b/resilience"
)

// pipelineType is the policy label of what a Measure layer counts: the
// calls through the layers inside it.
const pipelineType = "pipeline"

// Layers are the two layers of a [Measure]: Call times and counts each
// call, Attempt each attempt of it. Put Call outside the retry (outermost,
// or inside a fallback to see the errors it replaces) and Attempt inside
// it: right inside to time every attempt, the ones a guard refused
// included, or inside the guards to time only the attempts that reach the
// dependency:
//
//	m := resilienceprom.Measure[*http.Response](collector, "prices", 3)
//	p := resilience.Then(m.Call, retry.New[*http.Response](...), breaker.Policy[*http.Response](b), m.Attempt, timeout.New[*http.Response](time.Second))
type Layers[T any] struct {
	Call    resilience.Policy[T] // named "measure(name)"
	Attempt resilience.Policy[T] // named "measure-attempt(name)"
}

// Measure returns the layers that time the calls named name and their
// attempts, for a Collector c. Each call through Layers.Call counts in
// resilience_calls_total{policy="pipeline",name=name} by outcome: success
// (no error), ignored (an error once the caller's context is done),
// rejected (an error matching resilience.ErrRefused: a guard refused the
// call, or its last attempt) or failure; and its duration in
// resilience_call_duration_seconds. Each call through Layers.Attempt records
// its duration in resilience_attempt_duration_seconds with its number
// (attempt: "1" for the first attempt of a call through Layers.Call),
// bounded by attempts: later attempts (a retry with resilience.Off
// attempts, a hedge's copies) are recorded as attempt number attempts. An
// attempt without a Layers.Call around it has attempt "".
//
// A call through Layers.Call allocates one small context (the attempts'
// count); the durations cost two readings of c's clock each and a few
// atomic adds. Measure panics if c is nil, name is "" or attempts < 1.
func Measure[T any](c *Collector, name string, attempts int) Layers[T] {
	switch {
	case c == nil:
		panic("resilienceprom: Measure collector must not be nil")
	case name == "":
		panic("resilienceprom: Measure name must not be empty")
	case attempts < 1:
		panic(fmt.Sprintf("resilienceprom: Measure attempts must be >= 1, got %d", attempts))
	}
	ms := &measure{c: c, name: name}
	return Layers[T]{
		Call: resilience.New("measure("+name+")", func(ctx context.Context, next resilience.Next[T]) (T, error) {
			start := c.clock.Now()
			v, err := next.Call(&callContext{Context: ctx, owner: ms})
			s := c.calls.get(callKey{name, outcomeOf(ctx, err)}, c.newCallSeries)
			s.n.Add(1)
			s.dur.observe(c.since(start))
			return v, err
		}),
		Attempt: resilience.New("measure-attempt("+name+")", func(ctx context.Context, next resilience.Next[T]) (T, error) {
			n := 0
			if cc, ok := ctx.Value(ms).(*callContext); ok {
				n = min(int(cc.attempts.Add(1)), attempts)
			}
			start := c.clock.Now()
			v, err := next.Call(ctx)
			c.attempts.get(attemptKey{name, n, outcomeOf(ctx, err)}, c.newAttemptHistogram).observe(c.since(start))
			return v, err
		}),
	}
}

type measure struct {
	c    *Collector
	name string
}

// callContext is the context of a call through a Measure's Call layer: it
// counts the call's attempts for the Attempt layer, which finds it under
// the measure's pointer (so nested Measures each find their own).
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

type callKey struct{ name, outcome string }

type callSeries struct {
	n   atomic.Uint64
	dur *histogram
}

type attemptKey struct {
	name    string
	attempt int
	outcome string
}
