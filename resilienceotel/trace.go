package resilienceotel

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceotel/internal/export"
	"github.com/f0b5b96b/resilience/telemetry"
)

// The names of the span events the layers of a [Trace] add.
const (
	// SpanEventAttempt: an attempt ended (resilience.attempt,
	// resilience.outcome, resilience.attempt.duration, error.type,
	// server.address, resilience.breaker.state).
	SpanEventAttempt = "resilience.attempt"
	// SpanEventWait: the call waited between the end of one attempt and the
	// start of the next (resilience.attempt: the next one's number,
	// resilience.wait.duration).
	SpanEventWait = "resilience.retry.wait"
	// SpanEventRefused: a guard refused an attempt or the call
	// (resilience.guard.name, error.type: the guard's condition,
	// resilience.retry_after when the guard gave a hint other than
	// resilience.Never).
	SpanEventRefused = "resilience.refused"
	// SpanEventHedge: an attempt started while another was still running:
	// a hedge's copy (resilience.attempt).
	SpanEventHedge = "resilience.hedge.launched"
	// SpanEventHedgeWon: the first attempt to succeed among copies that ran
	// at the same time (resilience.attempt).
	SpanEventHedgeWon = "resilience.hedge.won"
	// SpanEventFallback: the call succeeded although every attempt failed:
	// a layer between the Call and Attempt layers (a fallback) replaced the
	// error (error.type: the replaced error's).
	SpanEventFallback = "resilience.fallback"
)

var (
	attrAttempts     = attribute.Key("resilience.attempts")
	attrAttemptDur   = attribute.Key("resilience.attempt.duration")
	attrWaitDur      = attribute.Key("resilience.wait.duration")
	attrGuardName    = attribute.Key("resilience.guard.name")
	attrRetryAfter   = attribute.Key("resilience.retry_after")
	attrBreakerState = attribute.Key("resilience.breaker.state")
	attrServerAddr   = attribute.Key("server.address")
)

// TraceLayers are the two layers of a [Trace]: Call goes outermost (outside
// any fallback), Attempt inside the retry and hedge, outside the guards
// whose refusals it should see:
//
//	t := resilienceotel.Trace[*http.Response]("prices", resilienceotel.TraceBreaker(b))
//	p := resilience.Then(t.Call, retry.New[*http.Response](...), t.Attempt, breaker.Policy[*http.Response](b), timeout.New[*http.Response](time.Second))
type TraceLayers[T any] struct {
	Call    resilience.Policy[T] // named "trace(name)"
	Attempt resilience.Policy[T] // named "trace-attempt(name)"
}

// TraceOption configures the layers made by [Trace]. Options apply in
// order; when two set the same field, the last one wins.
type TraceOption interface{ applyTrace(*traceConfig) }

type traceOption func(*traceConfig)

func (o traceOption) applyTrace(c *traceConfig) { o(c) }

type traceConfig struct {
	clock   clock.Clock
	breaker *breaker.Breaker
}

// TraceClock sets the clock the layers time attempts and waits on. Without
// it, clock.Real(). It panics if clk is nil.
func TraceClock(clk clock.Clock) TraceOption {
	if clk == nil {
		panic("resilienceotel: TraceClock clock must not be nil")
	}
	return traceOption(func(c *traceConfig) { c.clock = clk })
}

// TraceBreaker has each resilience.attempt event carry the state of b
// (closed, open, half-open) when the attempt started, which is the state
// the breaker admitted or refused it in unless it changed in between. It
// panics if b is nil.
func TraceBreaker(b *breaker.Breaker) TraceOption {
	if b == nil {
		panic("resilienceotel: TraceBreaker breaker must not be nil")
	}
	return traceOption(func(c *traceConfig) { c.breaker = b })
}

// Trace returns the layers that record, on the caller's span
// (trace.SpanFromContext of the call's context), what the pipeline did
// with each call named name: span events for each attempt and its
// outcome, the waits between attempts, refusals with the guard and its
// Retry-After hint, hedged copies and the one that won, and a fallback's
// replacement of the error; and, when the call returns, the attributes
// resilience.policy.name, resilience.attempts (the number of attempts
// that reached the Attempt layer) and resilience.outcome. The span is
// neither started nor ended by the layers, and its status is left to its
// owner.
//
// The layers are read from the context: a call whose span is not recording
// (no tracer, or not sampled) goes through both layers untouched, without
// allocating. A recording call allocates a small context for the call, and
// the events' attributes. An Attempt layer without a Call layer around it
// records nothing.
//
// Trace panics if name is "" or not valid UTF-8, or an option is nil.
func Trace[T any](name string, opts ...TraceOption) TraceLayers[T] {
	if name == "" {
		panic("resilienceotel: Trace name must not be empty")
	}
	telemetry.CheckName("resilienceotel: Trace", name)
	cfg := traceConfig{clock: clock.Real()}
	for _, o := range opts {
		if o == nil {
			panic("resilienceotel: Trace option must not be nil")
		}
		o.applyTrace(&cfg)
	}
	tr := &tracer{cfg: cfg, name: attrPolicyName.String(name)}
	call := resilience.New("trace("+name+")", func(ctx context.Context, next resilience.Next[T]) (T, error) {
		span := trace.SpanFromContext(ctx)
		if !span.IsRecording() {
			return next.Call(ctx)
		}
		c := &traceCall{Context: ctx, owner: tr, span: span}
		v, err := next.Call(c)
		tr.endCall(ctx, c, err)
		return v, err
	}).Describe(resilience.Layer{Kind: resilience.KindOther})
	attempt := resilience.New("trace-attempt("+name+")", func(ctx context.Context, next resilience.Next[T]) (T, error) {
		c, ok := ctx.Value(tr).(*traceCall)
		if !ok {
			return next.Call(ctx)
		}
		n, start, state := tr.startAttempt(c)
		v, err := next.Call(ctx)
		tr.endAttempt(ctx, c, n, start, state, err)
		return v, err
	}).Describe(resilience.Layer{Kind: resilience.KindOther})
	return TraceLayers[T]{Call: call, Attempt: attempt}
}

// tracer is the identity of one Trace's layers: the key under which its
// Call layer's context is found.
type tracer struct {
	cfg  traceConfig
	name attribute.KeyValue
}

// traceCall is the context of a recording call through a Trace's Call
// layer: what its attempts did so far.
type traceCall struct {
	context.Context
	owner *tracer
	span  trace.Span

	mu        sync.Mutex
	attempts  int       // attempts started
	running   int       // attempts running now
	lastEnd   time.Time // end of the last attempt; zero before the first
	succeeded bool      // an attempt succeeded
	concurred bool      // attempts ran at the same time
	lastErr   error     // error of the last attempt to end
}

func (c *traceCall) Value(k any) any {
	if k == any(c.owner) {
		return c
	}
	return c.Context.Value(k)
}

func (tr *tracer) startAttempt(c *traceCall) (n int, start time.Time, state string) {
	start = tr.cfg.clock.Now()
	if tr.cfg.breaker != nil {
		state = tr.cfg.breaker.State().String()
	}
	c.mu.Lock()
	c.attempts++
	n = c.attempts
	hedged := c.running > 0
	if hedged {
		c.concurred = true
	}
	c.running++
	lastEnd := c.lastEnd
	c.mu.Unlock()
	switch {
	case hedged:
		c.span.AddEvent(SpanEventHedge, trace.WithAttributes(tr.name, attrAttempt.Int(n)))
	case !lastEnd.IsZero():
		c.span.AddEvent(SpanEventWait, trace.WithAttributes(tr.name, attrAttempt.Int(n),
			attrWaitDur.Float64(start.Sub(lastEnd).Seconds())))
	}
	return n, start, state
}

func (tr *tracer) endAttempt(ctx context.Context, c *traceCall, n int, start time.Time, state string, err error) {
	end := tr.cfg.clock.Now()
	c.mu.Lock()
	c.running--
	if end.After(c.lastEnd) {
		c.lastEnd = end
	}
	won := err == nil && !c.succeeded && c.concurred
	if err == nil {
		c.succeeded = true
	}
	c.lastErr = err
	c.mu.Unlock()
	attrs := []attribute.KeyValue{tr.name, attrAttempt.Int(n), attrOutcome.String(export.OutcomeOf(ctx, err)),
		attrAttemptDur.Float64(end.Sub(start).Seconds())}
	if state != "" {
		attrs = append(attrs, attrBreakerState.String(state))
	}
	attrs = appendErr(attrs, err)
	c.span.AddEvent(SpanEventAttempt, trace.WithAttributes(attrs...))
	tr.refused(c.span, err)
	if won {
		c.span.AddEvent(SpanEventHedgeWon, trace.WithAttributes(tr.name, attrAttempt.Int(n)))
	}
}

func (tr *tracer) endCall(ctx context.Context, c *traceCall, err error) {
	c.mu.Lock()
	attempts, succeeded, lastErr := c.attempts, c.succeeded, c.lastErr
	c.mu.Unlock()
	switch {
	case err == nil && attempts > 0 && !succeeded:
		c.span.AddEvent(SpanEventFallback, trace.WithAttributes(appendErr([]attribute.KeyValue{tr.name}, lastErr)...))
	case attempts == 0:
		tr.refused(c.span, err) // refused before any attempt
	}
	c.span.SetAttributes(tr.name, attrAttempts.Int(attempts), attrOutcome.String(export.OutcomeOf(ctx, err)))
}

// refused adds a resilience.refused event if err is a guard's refusal.
func (tr *tracer) refused(span trace.Span, err error) {
	var r *resilience.RefusedError
	if err == nil || !errors.As(err, &r) {
		return
	}
	attrs := []attribute.KeyValue{tr.name, attrErrorType.String(export.ErrorType(r))}
	if r.Name() != "" {
		attrs = append(attrs, attrGuardName.String(strings.ToValidUTF8(r.Name(), "\uFFFD")))
	}
	if d := r.RetryAfter(); d >= 0 && d != resilience.Never {
		attrs = append(attrs, attrRetryAfter.Float64(d.Seconds()))
	}
	span.AddEvent(SpanEventRefused, trace.WithAttributes(attrs...))
}

// appendErr appends error.type and, where the error names its server,
// server.address, for a non-nil err.
func appendErr(attrs []attribute.KeyValue, err error) []attribute.KeyValue {
	if err == nil {
		return attrs
	}
	attrs = append(attrs, attrErrorType.String(export.ErrorType(err)))
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil && u.Hostname() != "" {
			attrs = append(attrs, attrServerAddr.String(strings.ToValidUTF8(u.Hostname(), "\uFFFD"))) // url.Parse takes "%ff" in a host
		}
	}
	return attrs
}
