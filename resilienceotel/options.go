package resilienceotel

import (
	"fmt"

	"go.opentelemetry.io/otel/metric"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/resilienceotel/internal/guardopt"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Option configures a [Metrics] made by [New]. Options apply in order;
// when two set the same field, the last one wins.
type Option interface{ apply(*config) }

type option func(*config)

func (o option) apply(c *config) { o(c) }

type config struct {
	provider metric.MeterProvider // New's
	registry *telemetry.Registry  // nil: no gauges
	keys     int                  // 0: no resilience.key attribute
	clock    clock.Clock          // nil: clock.Real()
}

// WithRegistry sets the registry whose guards' snapshots the observable
// gauges (and resilience.guard.refused) report at each collection, and
// adds the Metrics to its observers until Close: the policies given the
// registry as their observer reach it (see [Metrics.Observe]). Without
// it there are no gauges: only what the observed events and the Measure
// layers count. It panics if r is nil.
func WithRegistry(r *telemetry.Registry) Option {
	if r == nil {
		panic("resilienceotel: WithRegistry registry must not be nil")
	}
	return option(func(c *config) { c.registry = r })
}

// WithKeys turns on the resilience.key attribute (Event.Key: the key of a
// breaker.Keyed's breaker; a ratelimit.Keyed's events carry none) on the
// events, calls and waits that carry one,
// with at most max distinct keys per guard: the first max keys seen keep
// their value, later ones are reported as "_OTHER", so hostile keys cannot
// grow the number of series. Without it (the default), a keyed guard's
// events count under its name whatever their keys. It panics if max < 1.
func WithKeys(max int) Option {
	if max < 1 {
		panic(fmt.Sprintf("resilienceotel: WithKeys max must be >= 1, got %d", max))
	}
	return option(func(c *config) { c.keys = max })
}

// WithClock sets the clock the [Measure] layers time calls and attempts
// on. Without it, clock.Real(). It panics if clk is nil: leave the option
// out for clock.Real().
func WithClock(clk clock.Clock) Option {
	guardopt.Clock("resilienceotel", clk)
	return option(func(c *config) { c.clock = clk })
}
