package resilienceotel_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resilienceotel"
)

// spanEvent is a span event as the tests compare it: its name and
// attributes.
type spanEvent struct {
	Name  string
	Attrs map[string]any
}

func tracerProvider(t *testing.T) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, exp
}

// traced runs do under a recording span and returns that span's events
// and attributes.
func traced(t *testing.T, do func(ctx context.Context)) (events []spanEvent, attrs map[string]any) {
	t.Helper()
	tp, exp := tracerProvider(t)
	ctx, span := tp.Tracer("test").Start(context.Background(), "GET /prices")
	do(ctx)
	span.End()
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	for _, e := range spans[0].Events {
		ev := spanEvent{Name: e.Name, Attrs: map[string]any{}}
		for _, kv := range e.Attributes {
			ev.Attrs[string(kv.Key)] = kv.Value.AsInterface()
		}
		events = append(events, ev)
	}
	attrs = map[string]any{}
	for _, kv := range spans[0].Attributes {
		attrs[string(kv.Key)] = kv.Value.AsInterface()
	}
	return events, attrs
}

// TestTraceOutage: a traced call through retry > breaker > timeout during
// an outage shows, on the caller's span, its attempts with the breaker's
// state at admission, the waits between them, and the breaker's refusal
// with its guard and hint; the span's attributes sum the call up.
func TestTraceOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := breaker.New(breaker.WithName("prices"), breaker.WithThreshold(2), breaker.WithCooldown(10*time.Second))
		tl := resilienceotel.Trace[string]("prices", resilienceotel.TraceBreaker(b))
		p := resilience.Then(
			tl.Call,
			retry.New[string](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(100*time.Millisecond)),
				retry.WithMaxWait(time.Second), retry.WithMaxRefusalWait(resilience.Off)),
			tl.Attempt,
			breaker.Policy[string](b),
			timeout.New[string](time.Second),
		)
		failing := func(ctx context.Context) (string, error) {
			time.Sleep(20 * time.Millisecond)
			return "", downError{}
		}
		events, attrs := traced(t, func(ctx context.Context) {
			if _, err := p.Do(ctx, failing); !errors.Is(err, breaker.ErrOpen) {
				t.Fatalf("err = %v, want breaker.ErrOpen", err)
			}
		})
		name := "resilience.policy.name"
		want := []spanEvent{
			{"resilience.attempt", map[string]any{name: "prices", "resilience.attempt": int64(1), "resilience.outcome": "failure",
				"resilience.attempt.duration": 0.02, "resilience.breaker.state": "closed", "error.type": downType}},
			{"resilience.retry.wait", map[string]any{name: "prices", "resilience.attempt": int64(2), "resilience.wait.duration": 0.1}},
			{"resilience.attempt", map[string]any{name: "prices", "resilience.attempt": int64(2), "resilience.outcome": "failure",
				"resilience.attempt.duration": 0.02, "resilience.breaker.state": "closed", "error.type": downType}},
			{"resilience.retry.wait", map[string]any{name: "prices", "resilience.attempt": int64(3), "resilience.wait.duration": 0.1}},
			{"resilience.attempt", map[string]any{name: "prices", "resilience.attempt": int64(3), "resilience.outcome": "rejected",
				"resilience.attempt.duration": 0.0, "resilience.breaker.state": "open", "error.type": "breaker.open"}},
			{"resilience.refused", map[string]any{name: "prices", "error.type": "breaker.open", "resilience.guard.name": "prices",
				"resilience.retry_after": 9.9}},
		}
		if diff := cmp.Diff(want, events); diff != "" {
			t.Errorf("span events mismatch (-want +got):\n%s", diff)
		}
		wantAttrs := map[string]any{name: "prices", "resilience.attempts": int64(3), "resilience.outcome": "rejected"}
		if diff := cmp.Diff(wantAttrs, attrs); diff != "" {
			t.Errorf("span attributes mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestTraceSuccess: a call that succeeds at once has one attempt event,
// and nothing else.
func TestTraceSuccess(t *testing.T) {
	tl := resilienceotel.Trace[string]("prices")
	p := resilience.Then(tl.Call,
		resilience.Fallback(func(context.Context, error) (string, error) { return "cached", nil }),
		retry.New[string](), tl.Attempt)
	events, attrs := traced(t, func(ctx context.Context) {
		_, _ = p.Do(ctx, func(context.Context) (string, error) { return "ok", nil })
	})
	if len(events) != 1 || events[0].Name != resilienceotel.SpanEventAttempt || events[0].Attrs["resilience.outcome"] != "success" {
		t.Errorf("events = %v, want one successful attempt", events)
	}
	want := map[string]any{"resilience.policy.name": "prices", "resilience.attempts": int64(1), "resilience.outcome": "success"}
	if diff := cmp.Diff(want, attrs); diff != "" {
		t.Errorf("span attributes mismatch (-want +got):\n%s", diff)
	}
}

// TestTraceRefusedCall: a call a guard refuses before any attempt (the
// breaker outside the Attempt layer) has its refusal on the span.
func TestTraceRefusedCall(t *testing.T) {
	b := breaker.New(breaker.WithName("prices"))
	b.ForceOpen()
	tl := resilienceotel.Trace[string]("prices")
	p := resilience.Then(tl.Call, breaker.Policy[string](b), tl.Attempt)
	events, attrs := traced(t, func(ctx context.Context) {
		_, _ = p.Do(ctx, func(context.Context) (string, error) { return "ok", nil })
	})
	want := []spanEvent{{"resilience.refused", map[string]any{"resilience.policy.name": "prices",
		"error.type": "breaker.forced_open", "resilience.guard.name": "prices"}}}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("span events mismatch (-want +got):\n%s", diff)
	}
	if got := attrs["resilience.attempts"]; got != int64(0) {
		t.Errorf("resilience.attempts = %v, want 0", got)
	}
}

// TestTraceFallback: a call whose attempts all failed and that a fallback
// answered has a resilience.fallback event with the replaced error's type
// and the server it came from.
func TestTraceFallback(t *testing.T) {
	tl := resilienceotel.Trace[string]("prices")
	p := resilience.Then(tl.Call,
		resilience.Fallback(func(context.Context, error) (string, error) { return "cached", nil }),
		tl.Attempt)
	down := &url.Error{Op: "Get", URL: "http://prices.internal:8080/v1", Err: downError{}}
	events, attrs := traced(t, func(ctx context.Context) {
		if v, err := p.Do(ctx, func(context.Context) (string, error) { return "", down }); v != "cached" || err != nil {
			t.Fatalf("Do = %q, %v; want cached, nil", v, err)
		}
	})
	if len(events) != 2 {
		t.Fatalf("events = %v, want an attempt and a fallback", events)
	}
	want := spanEvent{"resilience.fallback", map[string]any{"resilience.policy.name": "prices",
		"error.type": "*url.Error", "server.address": "prices.internal"}}
	if diff := cmp.Diff(want, events[1]); diff != "" {
		t.Errorf("fallback event mismatch (-want +got):\n%s", diff)
	}
	if got := events[0].Attrs["server.address"]; got != "prices.internal" {
		t.Errorf("attempt's server.address = %v, want prices.internal", got)
	}
	if got := attrs["resilience.outcome"]; got != "success" {
		t.Errorf("resilience.outcome = %v, want success", got)
	}
}

// TestTraceHedge: a hedged copy that wins shows as launched and won; the
// loser, which succeeds later, does not.
func TestTraceHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := resilienceotel.Trace[string]("prices")
		p := resilience.Then(tl.Call, hedge.New[string](100*time.Millisecond), tl.Attempt)
		var calls atomic.Int32
		op := func(ctx context.Context) (string, error) {
			n := calls.Add(1)
			d := time.Second
			if n == 2 {
				d = 10 * time.Millisecond
			}
			time.Sleep(d) // the loser ignores its cancellation, and succeeds too
			return "copy", nil
		}
		events, _ := traced(t, func(ctx context.Context) {
			if _, err := p.Do(ctx, op); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second) // the loser returns
		})
		var got []spanEvent
		for _, e := range events {
			if e.Name == resilienceotel.SpanEventHedge || e.Name == resilienceotel.SpanEventHedgeWon {
				got = append(got, e)
			}
		}
		want := []spanEvent{
			{"resilience.hedge.launched", map[string]any{"resilience.policy.name": "prices", "resilience.attempt": int64(2)}},
			{"resilience.hedge.won", map[string]any{"resilience.policy.name": "prices", "resilience.attempt": int64(2)}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("hedge events mismatch (-want +got):\n%s\nall events: %v", diff, events)
		}
	})
}

// traceAllocPolicy is a Trace around a retry and a breaker, for the
// allocation checks.
func traceAllocPolicy() resilience.Policy[int] {
	tl := resilienceotel.Trace[int]("prices")
	return resilience.Then(tl.Call, retry.New[int](), tl.Attempt, breaker.Policy[int](breaker.New()))
}

// nonRecording returns a context whose span is not recording: a span of
// a provider that samples nothing.
func nonRecording(t testing.TB) context.Context {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx, span := tp.Tracer("test").Start(context.Background(), "call")
	if span.IsRecording() {
		t.Fatal("span is recording")
	}
	return ctx
}

// TestTraceAllocs: a success through the Trace layers allocates nothing
// when the caller's span does not record (no span, or not sampled).
func TestTraceAllocs(t *testing.T) {
	p := traceAllocPolicy()
	op := func(context.Context) (int, error) { return 1, nil }
	for name, ctx := range map[string]context.Context{"no span": context.Background(), "not sampled": nonRecording(t)} {
		if n := testing.AllocsPerRun(100, func() { _, _ = p.Do(ctx, op) }); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", name, n)
		}
	}
}

// TestTraceNoCallLayer: an Attempt layer without its Call layer records
// nothing, even under a recording span.
func TestTraceNoCallLayer(t *testing.T) {
	tl := resilienceotel.Trace[int]("prices")
	events, _ := traced(t, func(ctx context.Context) {
		_, _ = tl.Attempt.Do(ctx, func(context.Context) (int, error) { return 0, downError{} })
	})
	if len(events) != 0 {
		t.Errorf("events = %v, want none", events)
	}
}

// BenchmarkTrace is a success through Trace > retry > Trace.Attempt >
// breaker: without a span, with a span that does not record, and with
// one that does.
func BenchmarkTrace(b *testing.B) {
	p := traceAllocPolicy()
	op := func(context.Context) (int, error) { return 1, nil }
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(tracetest.NewNoopExporter())))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	recording, span := tp.Tracer("bench").Start(context.Background(), "call")
	defer span.End()
	for _, c := range []struct {
		name string
		ctx  context.Context
	}{{"no-span", context.Background()}, {"not-sampled", nonRecording(b)}, {"recording", recording}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = p.Do(c.ctx, op)
			}
		})
	}
}

// TestTraceClock: the layers time attempts on the clock TraceClock gives.
func TestTraceClock(t *testing.T) {
	clk := clock.NewFake()
	tl := resilienceotel.Trace[int]("prices", resilienceotel.TraceClock(clk))
	p := resilience.Then(tl.Call, tl.Attempt)
	events, _ := traced(t, func(ctx context.Context) {
		_, _ = p.Do(ctx, func(context.Context) (int, error) { clk.Advance(30 * time.Millisecond); return 1, nil })
	})
	if len(events) != 1 || events[0].Attrs["resilience.attempt.duration"] != 0.03 {
		t.Errorf("events = %v, want one attempt of 0.03s", events)
	}
}

// TestTracePanics: Trace and its options panic on invalid arguments,
// naming them.
func TestTracePanics(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"empty name", func() { resilienceotel.Trace[int]("") }, "resilienceotel: Trace name must not be empty"},
		{"nil option", func() { resilienceotel.Trace[int]("p", nil) }, "resilienceotel: Trace option must not be nil"},
		{"nil clock", func() { resilienceotel.TraceClock(nil) }, "resilienceotel: TraceClock clock must not be nil"},
		{"nil breaker", func() { resilienceotel.TraceBreaker(nil) }, "resilienceotel: TraceBreaker breaker must not be nil"},
	} {
		func() {
			defer func() {
				if got := fmt.Sprint(recover()); got != c.want {
					t.Errorf("%s: panic %q, want %q", c.name, got, c.want)
				}
			}()
			c.f()
		}()
	}
}

// TestTraceServerAddressInvalidUTF8: a *url.Error's host that is not
// valid UTF-8 (url.Parse takes a percent-escaped byte in a host:
// "http://prices%ff.internal/") must not break a trace export, which sends
// span attributes as protobuf strings too: server.address has U+FFFD for
// its invalid bytes, as resilience.guard.name has.
func TestTraceServerAddressInvalidUTF8(t *testing.T) {
	tl := resilienceotel.Trace[string]("prices")
	p := resilience.Then(tl.Call,
		resilience.Fallback(func(context.Context, error) (string, error) { return "cached", nil }),
		tl.Attempt)
	down := &url.Error{Op: "Get", URL: "http://prices%ff.internal/v1", Err: downError{}}
	events, _ := traced(t, func(ctx context.Context) {
		_, _ = p.Do(ctx, func(context.Context) (string, error) { return "", down })
	})
	var got []spanEvent
	for _, e := range events {
		got = append(got, spanEvent{e.Name, map[string]any{"server.address": e.Attrs["server.address"]}})
	}
	want := []spanEvent{
		{"resilience.attempt", map[string]any{"server.address": "prices\uFFFD.internal"}},
		{"resilience.fallback", map[string]any{"server.address": "prices\uFFFD.internal"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("server.address mismatch (-want +got):\n%s", diff)
	}
}
