package resilience

import (
	"context"

	"github.com/f0b5b96b/resilience/telemetry"
)

// Fallback returns a policy that runs p and, when p returns a non-nil error,
// returns fn(ctx, err) instead: fn receives p's error and what fn returns is
// the result (fn may return the error again, or a different one). fn is not
// called when p succeeds, and not called when the op panics: a panic goes on
// up to the caller. The fallback is outside p; put it outermost so it also
// covers the refusals of p's guards.
//
// fn is called with the caller's ctx, which may be done (e.g. when p
// returned ctx.Err()); check ctx.Err() in fn when a fallback must not run
// after the caller gave up.
//
// Options name the fallback ([WithFallbackName]) and report its use
// ([WithFallbackObserver]): each time fn is called, the observer receives a
// fallback.used event whose Err is the error fn replaces, before fn runs.
// Without an observer, a fallback costs what it did without options: no
// allocation per call.
//
// Fallback panics if fn or an option is nil.
func (p Policy[T]) Fallback(fn func(ctx context.Context, err error) (T, error), opts ...FallbackOption) Policy[T] {
	if fn == nil {
		panic("resilience: Fallback fn must not be nil")
	}
	return Then(Fallback(fn, opts...), p)
}

// Fallback returns a one-layer policy named "fallback" ("fallback(name)"
// with [WithFallbackName]) that runs the rest of the chain and, when it
// returns a non-nil error, returns fn(ctx, err) instead.
// Fallback(fn, opts...).Then(p) is the same as p.Fallback(fn, opts...); see
// [Policy.Fallback] for the contract. Fallback panics if fn or an option is
// nil.
func Fallback[T any](fn func(ctx context.Context, err error) (T, error), opts ...FallbackOption) Policy[T] {
	if fn == nil {
		panic("resilience: Fallback fn must not be nil")
	}
	var c fallbackConfig
	for _, o := range opts {
		if o == nil {
			panic("resilience: Fallback option must not be nil")
		}
		o.applyFallback(&c)
	}
	layer := "fallback"
	if c.name != "" {
		layer = "fallback(" + c.name + ")"
	}
	obs, name := c.observer, c.name
	return fallbackLayer(New(layer, func(ctx context.Context, next Next[T]) (T, error) {
		v, err := next.Call(ctx)
		if err != nil {
			if obs != nil {
				obs.Observe(telemetry.Event{Type: EventFallbackUsed, Name: name, Err: err})
			}
			return fn(ctx, err)
		}
		return v, nil
	}))
}

// FallbackOption configures a fallback built by [Fallback] or
// [Policy.Fallback]: [WithFallbackName], [WithFallbackObserver]. Options
// apply in order; the last one to set a setting wins.
type FallbackOption interface{ applyFallback(*fallbackConfig) }

// fallbackConfig is what FallbackOptions set; the zero value is the
// default: no name, no observer.
type fallbackConfig struct {
	name     string
	observer telemetry.Observer
}

type fallbackOption func(*fallbackConfig)

func (o fallbackOption) applyFallback(c *fallbackConfig) { o(c) }

// WithFallbackName names the fallback: its layer is "fallback(name)" and
// its events carry name as Event.Name. "" (the default) means no name: the
// layer is "fallback".
// It panics if name is not valid UTF-8 (see telemetry.CheckName).
func WithFallbackName(name string) FallbackOption {
	telemetry.CheckName("resilience: WithFallbackName", name)
	return fallbackOption(func(c *fallbackConfig) { c.name = name })
}

// WithFallbackObserver sets where the fallback's events go: a
// fallback.used event (see package telemetry) each time the fallback
// function is called, with the error it replaces as Err, delivered on the
// caller's goroutine before the function runs. nil (the default) means no
// events, at no cost.
func WithFallbackObserver(o telemetry.Observer) FallbackOption {
	return fallbackOption(func(c *fallbackConfig) { c.observer = o })
}
