package resilience_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/telemetry"
)

// TestFallbackObserverEvents: a fallback reports fallback.used, with the
// error it replaces, each time its function runs and before it runs; a
// success reports nothing. The function and method forms report alike.
func TestFallbackObserverEvents(t *testing.T) {
	errDown := errors.New("down")
	refused := resilience.Refuse(resilience.ErrRefused, "prices", -1)
	for _, form := range []string{"function", "method"} {
		var trace []string
		var events []telemetry.Event
		obs := telemetry.ObserverFunc(func(e telemetry.Event) {
			trace = append(trace, string(e.Type))
			events = append(events, e)
		})
		fb := func(_ context.Context, err error) (int, error) {
			trace = append(trace, "fn")
			return -1, nil
		}
		inner := tracer("inner", &trace)
		opts := []resilience.FallbackOption{resilience.WithFallbackName("prices"), resilience.WithFallbackObserver(obs)}
		p := inner.Fallback(fb, opts...)
		if form == "function" {
			p = resilience.Fallback(fb, opts...).Then(inner)
		}
		if got, want := p.String(), "fallback(prices) > inner"; got != want {
			t.Errorf("%s: String() = %q, want %q", form, got, want)
		}
		ctx := context.Background()
		for _, err := range []error{nil, errDown, refused, nil} {
			v, got := p.Do(ctx, func(context.Context) (int, error) { return 1, err })
			if want := map[bool]int{true: 1, false: -1}[err == nil]; v != want || got != nil {
				t.Errorf("%s: Do with op error %v = %d, %v; want %d, nil", form, err, v, got, want)
			}
		}
		want := []telemetry.Event{
			{Type: resilience.EventFallbackUsed, Name: "prices", Err: errDown},
			{Type: resilience.EventFallbackUsed, Name: "prices", Err: refused},
		}
		if diff := cmp.Diff(want, events, cmpopts.EquateErrors()); diff != "" {
			t.Errorf("%s: events mismatch (-want +got):\n%s", form, diff)
		}
		wantTrace := []string{
			"inner>", "<inner", // success: no event, no fn
			"inner>", "<inner", "fallback.used", "fn",
			"inner>", "<inner", "fallback.used", "fn",
			"inner>", "<inner",
		}
		if diff := cmp.Diff(wantTrace, trace); diff != "" {
			t.Errorf("%s: trace mismatch (-want +got):\n%s", form, diff)
		}
	}
}

// A fallback whose function returns the error again was still used: the
// event is about the function being called, not about its result.
func TestFallbackObserverFunctionFails(t *testing.T) {
	errDown, errStale := errors.New("down"), errors.New("no stale value")
	var events []telemetry.Event
	p := resilience.Fallback(func(context.Context, error) (int, error) { return 0, errStale },
		resilience.WithFallbackObserver(telemetry.ObserverFunc(func(e telemetry.Event) { events = append(events, e) })))
	if _, err := p.Do(context.Background(), func(context.Context) (int, error) { return 0, errDown }); err != errStale {
		t.Errorf("Do = %v, want the fallback's %v", err, errStale)
	}
	if diff := cmp.Diff([]telemetry.Event{{Type: resilience.EventFallbackUsed, Err: errDown}}, events, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	if got := p.String(); got != "fallback" {
		t.Errorf("String() = %q, want fallback (no name)", got)
	}
}

func TestFallbackOptionsLastWins(t *testing.T) {
	var a, b telemetry.Counter
	p := resilience.Fallback(func(context.Context, error) (int, error) { return 0, nil },
		resilience.WithFallbackName("x"), resilience.WithFallbackObserver(&a),
		resilience.WithFallbackName("y"), resilience.WithFallbackObserver(&b))
	_, _ = p.Do(context.Background(), func(context.Context) (int, error) { return 0, errors.New("down") })
	if got := p.String(); got != "fallback(y)" {
		t.Errorf("String() = %q, want fallback(y)", got)
	}
	if diff := cmp.Diff([]telemetry.Count{{Name: "y", Type: resilience.EventFallbackUsed, N: 1}}, b.Counts()); diff != "" {
		t.Errorf("last observer's counts mismatch (-want +got):\n%s", diff)
	}
	if got := a.Counts(); len(got) != 0 {
		t.Errorf("first observer counted %v, want nothing", got)
	}
	// A nil observer is "none", and a nil option panics naming it.
	_ = resilience.Fallback(func(context.Context, error) (int, error) { return 0, nil }, resilience.WithFallbackObserver(nil))
	if got, want := panicMessage(func() {
		resilience.Fallback[int](func(context.Context, error) (int, error) { return 0, nil }, nil)
	}), "resilience: Fallback option must not be nil"; got != want {
		t.Errorf("panic = %q, want %q", got, want)
	}
}

// With or without an observer, a fallback allocates nothing of its own, on
// success or when its function runs.
func TestFallbackObserverNoAllocations(t *testing.T) {
	var n int
	obs := telemetry.ObserverFunc(func(telemetry.Event) { n++ })
	errDown := errors.New("down")
	fb := func(context.Context, error) (int, error) { return 0, nil }
	failing := func(context.Context) (int, error) { return 0, errDown }
	ctx := context.Background()
	plain := passThrough("a").Fallback(fb)
	observed := passThrough("a").Fallback(fb, resilience.WithFallbackName("a"), resilience.WithFallbackObserver(obs))
	for name, f := range map[string]func(){
		"success, no observer":    func() { _, _ = plain.Do(ctx, okOp) },
		"success, observer":       func() { _, _ = observed.Do(ctx, okOp) },
		"fallback, no observer":   func() { _, _ = plain.Do(ctx, failing) },
		"fallback, with observer": func() { _, _ = observed.Do(ctx, failing) },
	} {
		if got := testing.AllocsPerRun(100, f); got != 0 {
			t.Errorf("%s: %v allocs per call, want 0", name, got)
		}
	}
	if n != 101 {
		t.Errorf("observer saw %d events in 101 fallbacks", n)
	}
}
