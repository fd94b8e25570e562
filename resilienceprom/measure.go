package resilienceprom

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/resilienceprom/internal/export"
	"github.com/f0b5b96b/resilience/telemetry"
)

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
// atomic adds. Measure panics if c is nil, name is "" or not valid UTF-8
// (see telemetry.CheckName), or attempts < 1.
func Measure[T any](c *Collector, name string, attempts int) Layers[T] {
	switch {
	case c == nil:
		panic("resilienceprom: Measure collector must not be nil")
	case name == "":
		panic("resilienceprom: Measure name must not be empty")
	case attempts < 1:
		panic(fmt.Sprintf("resilienceprom: Measure attempts must be >= 1, got %d", attempts))
	}
	telemetry.CheckName("resilienceprom: Measure", name)
	call, attempt := export.Measure[T](c.clock, name, attempts, &measure{c: c, name: name})
	return Layers[T]{Call: call, Attempt: attempt}
}

// measure records what the layers of one Measure see in its Collector.
type measure struct {
	c    *Collector
	name string
}

func (ms *measure) Call(_ context.Context, outcome string, d time.Duration, _ error) {
	s := ms.c.calls.Get(callKey{ms.name, outcome}, ms.c.newCallSeries)
	s.n.Add(1)
	s.dur.observe(d)
}

func (ms *measure) Attempt(_ context.Context, n int, outcome string, d time.Duration, _ error) {
	ms.c.attempts.Get(attemptKey{ms.name, n, outcome}, ms.c.newAttemptHistogram).observe(d)
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
