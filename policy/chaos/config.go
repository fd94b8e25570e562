package chaos

import (
	"fmt"
	"math/rand/v2"

	"github.com/f0b5b96b/resilience/internal/guardopt"
	"github.com/f0b5b96b/resilience/internal/jsonconf"
	"github.com/f0b5b96b/resilience/internal/lockedrand"
	"github.com/f0b5b96b/resilience/internal/merge"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Config is the whole configuration of an [Injector], one field per
// option, for configurations read at run time (it reads and writes JSON,
// but for Observer and Random): fill it, check it with [Config.Validate],
// and pass it with [WithConfig].
//
// A zero field means the field's default, stated at the field, so Config{}
// is the default configuration; WithConfig sets only the non-zero fields.
type Config struct {
	// Rate is the share of calls that get chaos while the injector is
	// enabled, in [0, 1]. 0 means the rate given to [NewInjector], which
	// is then the default that a Config read at run time may change; to
	// have no chaos from a Config, set Disabled. [Injector.SetRate]
	// changes it while the injector runs.
	Rate float64

	// Disabled makes the injector start disabled: no call gets chaos
	// until [Injector.Enable]. false (the default) starts it enabled.
	Disabled bool

	// Name names the injector: the name it is registered, exported and
	// shown under as a telemetry.Guard, and the Name of its events. Empty
	// (the default) leaves it unnamed (a telemetry.Registry refuses it).
	Name string

	// Observer receives one event per injection, by the chaos policies
	// ([EventFault], [EventLatency], [EventResult]) or by a call of
	// [Injector.Inject] ([EventInjected]). It is called on the goroutine
	// of the call that gets chaos, from many at once, so it must be safe
	// for that. nil (the default) reports none, at no cost. It is not
	// written to or read from JSON.
	Observer telemetry.Observer

	// Random draws a number in [0, 1) for each call decided while the
	// rate is strictly between 0 and 1; it must be safe for simultaneous
	// use. nil (the default) means the top-level Float64 of math/rand/v2.
	// [WithRand] sets it from a seeded *rand.Rand. It is not written to or
	// read from JSON.
	Random func() float64
}

// Validate reports the first invalid field of c, with the message
// NewInjector would panic with, or nil if c is valid. Zero fields are
// valid: each means its default.
func (c Config) Validate() error {
	if !(c.Rate >= 0 && c.Rate <= 1) {
		return fmt.Errorf("chaos: Rate must be in [0, 1], or 0 for NewInjector's rate, got %v", c.Rate)
	}
	return nil
}

// MarshalJSON writes c as a JSON object of its non-zero fields, by their
// Go names. Observer and Random are left out.
func (c Config) MarshalJSON() ([]byte, error) { return jsonconf.Marshal(c) }

// UnmarshalJSON reads what [Config.MarshalJSON] writes into c: the fields
// present set c's, absent or null ones leave c's as they are. An unknown
// field is an error naming the field. It does not validate: call
// [Config.Validate].
func (c *Config) UnmarshalJSON(data []byte) error {
	// jsonconf reads field by field, never the whole struct through
	// encoding/json, so passing c itself does not recurse.
	return jsonconf.Unmarshal("chaos", data, c)
}

// Option configures an [Injector] in [NewInjector]. Options apply in
// order; when two set the same field, the last one wins.
type Option interface{ apply(*Config) }

type option func(*Config)

func (o option) apply(c *Config) { o(c) }

// WithName sets [Config.Name]. It panics if name is not valid UTF-8 (see
// telemetry.CheckName).
func WithName(name string) Option {
	guardopt.Name("chaos", name)
	return option(func(c *Config) { c.Name = name })
}

// WithObserver sets [Config.Observer], the receiver of the injector's
// events (nil: none, the default).
func WithObserver(o telemetry.Observer) Option {
	return option(func(c *Config) { c.Observer = o })
}

// WithRandom sets [Config.Random], the source of the injector's draws
// (nil: math/rand/v2's Float64). f must be safe for simultaneous use; for
// a seeded *rand.Rand, use [WithRand].
func WithRandom(f func() float64) Option { return option(func(c *Config) { c.Random = f }) }

// WithRand sets [Config.Random] to draw from r's Float64, under a mutex of
// the injector's: a seeded r makes the chaos repeatable (the same seed and
// the same order of calls give chaos to the same calls), and calls on many
// goroutines may share it, taking r's numbers in the order they reach the
// mutex. r must not be used elsewhere while the injector is in use. It
// panics if r is nil: leave the option out for the default source.
func WithRand(r *rand.Rand) Option {
	if r == nil {
		panic("chaos: WithRand(nil): the source must not be nil; leave the option out for math/rand/v2's Float64")
	}
	f := lockedrand.Float64(r)
	return option(func(c *Config) { c.Random = f })
}

// WithConfig sets the fields of c that are not zero, and only those, so it
// never erases NewInjector's rate, an earlier option or a default:
// c.Rate, when set, replaces NewInjector's rate. Options after it change
// single fields again.
func WithConfig(c Config) Option { return option(func(cfg *Config) { merge.NonZero(cfg, c) }) }
