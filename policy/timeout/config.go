package timeout

import (
	"fmt"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// Config is the whole configuration of a timeout policy. [New] starts from
// Config{Duration: d} and applies its options to it in order; [WithConfig]
// sets every field at once, Duration included, for configurations read at
// run time (check them with [Config.Validate] first).
type Config struct {
	// Duration is the most time one call may take, on Clock. It must be
	// > 0: there is no "no timeout" value. New's argument sets it.
	Duration time.Duration

	// Abandon makes the policy return at the deadline even if the op
	// ignores its context: the op then runs on in a goroutine of its own
	// until it returns, and its result is dropped. Without it (the
	// default), the policy cancels the op's context at the deadline and
	// waits for the op to return. Default: false.
	Abandon bool

	// Clock is the source of time for the deadline. nil means
	// clock.Real(), whose deadline is the standard context.WithTimeout's.
	// Default: nil.
	Clock clock.Clock
}

// Validate reports whether c is a valid configuration: nil if it is, else
// an error naming the field at fault and its value, the same message [New]
// panics with.
func (c Config) Validate() error {
	if c.Duration <= 0 {
		return fmt.Errorf("timeout: Duration must be > 0, got %v", c.Duration)
	}
	return nil
}

// Option configures a timeout policy built by [New]. Options are made by
// the With functions of this package and apply in order: the last one to
// set a field wins.
type Option interface{ apply(*Config) }

type option func(*Config)

func (o option) apply(c *Config) { o(c) }

// WithAbandon sets [Config.Abandon]: whether to return at the deadline
// without waiting for an op that ignores its context.
func WithAbandon(abandon bool) Option { return option(func(c *Config) { c.Abandon = abandon }) }

// WithClock sets [Config.Clock]: the source of time (nil = clock.Real()).
func WithClock(c clock.Clock) Option { return option(func(cfg *Config) { cfg.Clock = c }) }

// WithConfig sets every field of the configuration to c's, Duration
// included.
func WithConfig(c Config) Option { return option(func(cfg *Config) { *cfg = c }) }
