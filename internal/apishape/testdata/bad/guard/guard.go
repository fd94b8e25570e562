// Package guard breaks each rule of package apishape once, for its test.
package guard

import (
	"fmt"

	"github.com/f0b5b96b/resilience/telemetry"
)

type config struct{ min, max int }

// Guard has no Name method, and counts its refusals as Rejected.
type Guard struct{ Rejected uint64 }

func (g *Guard) Snapshot() telemetry.Snapshot { return telemetry.Snapshot{} }

// Keyed is a guard with both methods, but a Name of the wrong type.
type Keyed[K comparable] struct{}

func (k *Keyed[K]) Name() []byte                 { return nil }
func (k *Keyed[K]) Snapshot() telemetry.Snapshot { return telemetry.Snapshot{} }

// Hidden is a guard that is not listed as one.
type Hidden struct{}

func (Hidden) Name() string                 { return "" }
func (Hidden) Snapshot() telemetry.Snapshot { return telemetry.Snapshot{} }

// Stats calls its refusals Shed.
type Stats struct{ Shed uint64 }

// Option is a func type, not a sealed interface.
type Option func(*config)

// OpenOption has an exported method: anyone can make one.
type OpenOption interface{ Apply(*config) }

// AliasOption is an alias of a func type.
type AliasOption = func(*config)

// SealedOption has the shape.
type SealedOption interface{ apply(*config) }

// BothOption embeds sealed interfaces only: it is sealed.
type BothOption interface {
	SealedOption
	applyOther(*config)
}

// LeakyOption embeds an interface of another package.
type LeakyOption interface {
	SealedOption
	fmt.Stringer
}

// WithLimits sets two fields.
func WithLimits(min, max int) Option { return func(c *config) { c.min, c.max = min, max } }

// WithMin sets one.
func WithMin(n int) Option { return func(c *config) { c.min = n } }

// WithName and WithObserver exist; WithClock does not.
func WithName(string) Option  { return func(*config) {} }
func WithObserver(any) Option { return func(*config) {} }
func Policy()                 {}
func KeyedPolicy()            {}
func FooPolicy()              {}
