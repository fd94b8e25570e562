package pipeline

import (
	"encoding/json"
	"fmt"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Option configures a [Set] or a [Build]. Options are made by the With
// functions of this package and apply in order: the last one to set a
// setting wins.
type Option interface{ apply(*settings) }

type option func(*settings)

func (o option) apply(s *settings) { o(s) }

type settings struct {
	clock    clock.Clock
	observer telemetry.Observer
	registry *telemetry.Registry
	kinds    map[string]any // func(json.RawMessage) (resilience.Policy[T], error)
	onReload func(Reload)
}

// WithClock sets the clock of every guard and layer whose configuration
// does not set one (configurations read from JSON never do). Without it,
// clock.Real().
func WithClock(c clock.Clock) Option { return option(func(s *settings) { s.clock = c }) }

// WithObserver sets the observer of every guard and layer that takes one
// (breaker, bulkhead, ratelimit, adaptive, throttle, retry, timeout,
// hedge) and whose configuration does not set one. Without it, no events.
func WithObserver(o telemetry.Observer) Option { return option(func(s *settings) { s.observer = o }) }

// WithRegistry registers in r each guard (breaker, bulkhead, rate limiter,
// adaptive limiter, throttler) when it is made (by [Build], or by the
// [Set.Apply] that adds it), under its kind and Name (the guard's name in
// the document, unless its config sets Name). A guard that a reload removes, or replaces by one of another
// kind, is unregistered before the guards the reload makes are
// registered. A registration the registry refuses (another guard of that
// kind and name, registered by someone else) is listed in the Reload's
// Errors. Without it, nothing is registered.
func WithRegistry(r *telemetry.Registry) Option { return option(func(s *settings) { s.registry = r }) }

// WithOnReload sets f to be called with each successful [Set.Apply]'s
// [Reload], after the new version is in use, on the goroutine that
// called Apply, one at a time. Without it, nothing is called; Apply
// returns the Reload either way.
func WithOnReload(f func(Reload)) Option { return option(func(s *settings) { s.onReload = f }) }

// WithKind adds a layer kind of the caller's: a layer {"kind": kind,
// "config": ...} is build(config), config being the layer's "config" as
// it is in the document (nil if absent). An error build returns is
// reported at the layer's config path; so is a panic. Each use of the kind
// in a document calls build again, at each [Set.Apply]: build must not
// keep state that should outlive a reload (make it a guard of your own and
// close over it).
//
// Kinds are per Set (or per Build): there is no registry shared by the
// process. The last WithKind of a kind wins. [NewSet] and [Build] panic if
// build makes policies of another type than theirs. WithKind panics if
// kind is empty or the name of a built-in kind, or build is nil.
func WithKind[T any](kind string, build func(config json.RawMessage) (resilience.Policy[T], error)) Option {
	if kind == "" {
		panic("pipeline: WithKind kind must not be empty")
	}
	if _, ok := guardKinds[kind]; ok || isLayerKind(kind) {
		panic(fmt.Sprintf("pipeline: WithKind(%q): %q is a built-in kind", kind, kind))
	}
	if build == nil {
		panic(fmt.Sprintf("pipeline: WithKind(%q): build must not be nil", kind))
	}
	return option(func(s *settings) {
		if s.kinds == nil {
			s.kinds = make(map[string]any)
		}
		s.kinds[kind] = build
	})
}

func configure[T any](opts []Option) settings {
	var s settings
	for _, o := range opts {
		if o == nil {
			panic("pipeline: option must not be nil")
		}
		o.apply(&s)
	}
	if s.clock == nil {
		s.clock = clock.Real()
	}
	for kind, b := range s.kinds {
		if _, ok := b.(func(json.RawMessage) (resilience.Policy[T], error)); !ok {
			var zero T
			panic(fmt.Sprintf("pipeline: WithKind(%q) builds %T, not a layer of resilience.Policy[%T]", kind, b, any(zero)))
		}
	}
	return s
}
