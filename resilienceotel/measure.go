package resilienceotel

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/resilienceotel/internal/export"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Layers are the two layers of a [Measure]: Call times and counts each
// call, Attempt each attempt of it. Put Call outside the retry (outermost,
// or inside a fallback to see the errors it replaces) and Attempt inside
// it, usually right outside the timeout:
//
//	m := resilienceotel.Measure[*http.Response](metrics, "prices", 3)
//	p := resilience.Then(m.Call, retry.New[*http.Response](...), breaker.Policy[*http.Response](b), m.Attempt, timeout.New[*http.Response](time.Second))
type Layers[T any] struct {
	Call    resilience.Policy[T] // named "measure(name)"
	Attempt resilience.Policy[T] // named "measure-attempt(name)"
}

// Measure returns the layers that time the calls named name and their
// attempts, for a Metrics m. Each call through Layers.Call counts in
// resilience.calls (resilience.policy.type "pipeline", resilience.policy.name
// name) by outcome: success (no error), ignored (an error once the caller's
// context is done), rejected (an error matching resilience.ErrRefused: a
// guard refused the call, or its last attempt) or failure; and its duration
// in resilience.call.duration. Each call through Layers.Attempt records its
// duration in resilience.attempt.duration with its number
// (resilience.attempt: 1 for the first attempt of a call through
// Layers.Call), bounded by attempts: later attempts (a retry with
// resilience.Off attempts, a hedge's copies) are recorded as attempt
// number attempts. An attempt without a Layers.Call around it has no
// resilience.attempt attribute.
//
// A call through Layers.Call allocates one small context (the attempts'
// count); the durations cost two readings of m's clock each and one
// histogram record. Measure panics if m is nil or a zero Metrics (not
// made by New), name is "" or not valid UTF-8 (see telemetry.CheckName),
// or attempts < 1.
func Measure[T any](m *Metrics, name string, attempts int) Layers[T] {
	switch {
	case m == nil:
		panic("resilienceotel: Measure metrics must not be nil")
	case m.values.meter == nil:
		panic("resilienceotel: Measure of a zero Metrics: create one with New")
	case name == "":
		panic("resilienceotel: Measure name must not be empty")
	case attempts < 1:
		panic(fmt.Sprintf("resilienceotel: Measure attempts must be >= 1, got %d", attempts))
	}
	telemetry.CheckName("resilienceotel: Measure", name)
	ms := &measure{m: m, name: name}
	call, attempt := export.Measure[T](m.clock, name, attempts, ms)
	return Layers[T]{Call: call, Attempt: attempt}
}

// measure records what the layers of one Measure see in its Metrics.
type measure struct {
	m    *Metrics
	name string
}

type callKey struct {
	name, outcome, errT string
}

type callSeries struct {
	n   countCell
	obs metric.ObserveOption  // resilience.calls' attributes
	rec []metric.RecordOption // resilience.call.duration's
}

type attemptKey struct {
	name          string
	attempt       int
	outcome, errT string
}

type attemptSeries struct {
	rec []metric.RecordOption
}

func (ms *measure) errType(err error) string {
	if err == nil {
		return ""
	}
	return ms.m.errs.of(struct{}{}, export.ErrorType(err))
}

func (ms *measure) Call(ctx context.Context, outcome string, d time.Duration, err error) {
	s := ms.m.callSeries.Get(callKey{ms.name, outcome, ms.errType(err)}, newCallSeries)
	s.n.add()
	ms.m.callDur.Record(ctx, d.Seconds(), s.rec...)
}

func (ms *measure) Attempt(ctx context.Context, n int, outcome string, d time.Duration, err error) {
	s := ms.m.attemptSeries.Get(attemptKey{ms.name, n, outcome, ms.errType(err)}, newAttemptSeries)
	ms.m.attemptDur.Record(ctx, d.Seconds(), s.rec...)
}

func newCallSeries(k callKey) *callSeries {
	attrs := []attribute.KeyValue{attrPolicyName.String(k.name), attrOutcome.String(k.outcome)}
	if k.errT != "" {
		attrs = append(attrs, attrErrorType.String(k.errT))
	}
	return &callSeries{
		obs: metric.WithAttributeSet(attribute.NewSet(append(attrs[:len(attrs):len(attrs)], attrPolicyType.String(export.PipelineType))...)),
		rec: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))},
	}
}

func newAttemptSeries(k attemptKey) *attemptSeries {
	attrs := []attribute.KeyValue{attrPolicyName.String(k.name), attrOutcome.String(k.outcome)}
	if k.attempt > 0 {
		attrs = append(attrs, attrAttempt.Int(k.attempt))
	}
	if k.errT != "" {
		attrs = append(attrs, attrErrorType.String(k.errT))
	}
	return &attemptSeries{rec: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}}
}
