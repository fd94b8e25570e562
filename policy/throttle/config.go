package throttle

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/guardopt"
	"github.com/f0b5b96b/resilience/internal/jsonconf"
	"github.com/f0b5b96b/resilience/internal/lockedrand"
	"github.com/f0b5b96b/resilience/internal/merge"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Config is the whole configuration of a [Throttler], one field per
// option, for configurations read at run time (it reads and writes JSON,
// but for Observer, Clock and Random): fill it, check it with [Config.Validate], and
// pass it with [WithConfig].
//
// A zero field means the field's default, stated at the field, so
// Config{} is the default configuration (the SRE book's: K 2 over two
// minutes); WithConfig sets only the non-zero fields. No setting takes
// resilience.Off.
type Config struct {
	// K is how many requests the throttler lets through per request the
	// dependency accepted: it refuses a request with probability
	// max(0, (requests − K × accepts) / (requests + 1)), requests being
	// those it sent over the window. At least 1: 1 is
	// the most aggressive, 2 lets through twice what the dependency
	// accepts (so it still sees enough traffic to show it has
	// recovered). 0 means 2.
	K float64

	// Window is how long requests and accepts are remembered: the last
	// Window, in 16 time buckets, so between 15/16 of Window and all of
	// it. At least 16ns. 0 means 2 minutes.
	Window time.Duration

	// Name names the throttler in errors and in the policy's layer name,
	// "throttle(Name)". Empty (the default) leaves it unnamed.
	Name string

	// Observer receives the throttler's events ([EventRefused], one per
	// refusal); nil (the default) reports none, at no cost. It is called
	// on the refused caller's goroutine, from many at once, so it must be
	// safe for that. It is not written to or read from JSON.
	Observer telemetry.Observer

	// Clock is the source of time for the window's buckets. nil (the
	// default) means clock.Real(). It is not written to or read from
	// JSON.
	Clock clock.Clock

	// Random returns a number in [0, 1) for each request the throttler
	// may refuse: it is refused when the number is below the probability.
	// It is called from many goroutines at once, so it must be safe for
	// that. nil (the default) means math/rand/v2's Float64. Give a seeded
	// source to make a test repeatable. It is not written to or read from
	// JSON.
	Random func() float64
}

const (
	defaultK      = 2
	defaultWindow = 2 * time.Minute
)

// Validate reports the first invalid field of c, with the message New
// would panic with, or nil if c is valid. Zero fields are valid: each
// means its default.
func (c Config) Validate() error {
	switch {
	case c.K != 0 && !(c.K >= 1 && c.K <= math.MaxFloat64):
		return fmt.Errorf("throttle: K must be finite and >= 1, or 0 for the default 2, got %v", c.K)
	case c.Window < 0 || c.Window > 0 && c.Window < buckets:
		return fmt.Errorf("throttle: Window must be at least %v, or 0 for the default 2m, got %v", time.Duration(buckets), c.Window)
	}
	return nil
}

// MarshalJSON writes c as a JSON object of its non-zero fields, by their
// Go names, with Window as a Go duration string ("2m0s"). Observer,
// Clock and Random are left out.
func (c Config) MarshalJSON() ([]byte, error) { return jsonconf.Marshal(c) }

// UnmarshalJSON reads what [Config.MarshalJSON] writes into c: the fields
// present set c's, absent or null ones leave c's as they are. An unknown
// field, or a duration that is not a Go duration string, is an error
// naming the field. It does not validate: call [Config.Validate].
func (c *Config) UnmarshalJSON(data []byte) error {
	// jsonconf reads field by field, never the whole struct through
	// encoding/json, so passing c itself does not recurse.
	return jsonconf.Unmarshal("throttle", data, c)
}

// Option configures a [Throttler] in [New]. Options apply in order; when
// two set the same field, the last one wins.
type Option interface{ apply(*Config) }

type option func(*Config)

func (o option) apply(c *Config) { o(c) }

// WithK sets [Config.K]: the requests let through per accepted request
// (without it, 2). It panics if k is 0: leave the option out for the
// default.
func WithK(k float64) Option {
	if k == 0 {
		panic("throttle: WithK(0): K must be finite and >= 1; leave the option out for the default, 2")
	}
	return option(func(c *Config) { c.K = k })
}

// WithWindow sets [Config.Window]: how long requests and accepts are
// remembered (without it, 2 minutes). It panics if d is 0.
func WithWindow(d time.Duration) Option {
	if d == 0 {
		panic("throttle: WithWindow(0s): the window must be > 0; leave the option out for the default, 2m0s")
	}
	return option(func(c *Config) { c.Window = d })
}

// WithName sets [Config.Name].
// It panics if name is not valid UTF-8 (see telemetry.CheckName).
func WithName(name string) Option {
	guardopt.Name("throttle", name)
	return option(func(c *Config) { c.Name = name })
}

// WithObserver sets [Config.Observer], the receiver of the throttler's
// events (without it, none are reported).
func WithObserver(o telemetry.Observer) Option { return option(func(c *Config) { c.Observer = o }) }

// WithClock sets [Config.Clock], the source of time.
// It panics if c is nil: leave the option out for clock.Real().
func WithClock(c clock.Clock) Option {
	guardopt.Clock("throttle", c)
	return option(func(cfg *Config) { cfg.Clock = c })
}

// WithRandom sets [Config.Random], the source of the refusals' draws (nil:
// math/rand/v2's Float64). f must be safe for simultaneous use; for a
// seeded *rand.Rand, use [WithRand].
func WithRandom(f func() float64) Option { return option(func(c *Config) { c.Random = f }) }

// WithRand sets [Config.Random] to draw from r's Float64 under a mutex of
// the throttler's: a seeded r makes the refusals repeatable (the same seed
// and the same order of requests give the same refusals), and requests on
// many goroutines may share it, taking r's numbers in the order they reach
// the mutex. r must not be used elsewhere while the throttler is in use.
// It panics if r is nil: leave the option out for the default source.
func WithRand(r *rand.Rand) Option {
	if r == nil {
		panic("throttle: WithRand(nil): the source must not be nil; leave the option out for math/rand/v2's Float64")
	}
	f := lockedrand.Float64(r)
	return option(func(c *Config) { c.Random = f })
}

// WithConfig sets the fields of c that are not zero, and only those, so
// it never erases an earlier option or a default. Options after it change
// single fields again.
func WithConfig(c Config) Option { return option(func(cfg *Config) { merge.NonZero(cfg, c) }) }
