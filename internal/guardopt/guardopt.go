// Package guardopt checks the arguments of the options that every guard
// shares (WithName, WithClock, WithObserver), once for every package, so
// that their panics read the same everywhere:
//
//	breaker: WithName("db\xff"): name must be valid UTF-8
//	bulkhead: WithClock(nil): the clock must not be nil; leave the option out for clock.Real()
//
// Each package's option calls the function here with its package name and
// stores what it returns in its own Config. WithObserver takes any value:
// nil means no events (the default), and clears an earlier observer.
package guardopt

import (
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Name returns name, the argument of pkg's WithName, or panics unless it
// is valid UTF-8 (see telemetry.CheckName). "" is valid: no name.
func Name(pkg, name string) string {
	telemetry.CheckName(pkg+": WithName", name)
	return name
}

// Clock returns c, the argument of pkg's WithClock, or panics if it is
// nil: a nil clock would silently mean the default, clock.Real(), which
// leaving the option out already gives.
func Clock(pkg string, c clock.Clock) clock.Clock {
	if c == nil {
		panic(pkg + ": WithClock(nil): the clock must not be nil; leave the option out for clock.Real()")
	}
	return c
}
