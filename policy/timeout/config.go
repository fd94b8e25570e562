package timeout

import (
	"fmt"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/guardopt"
	"github.com/f0b5b96b/resilience/internal/jsonconf"
	"github.com/f0b5b96b/resilience/internal/merge"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Config is the configuration of a timeout policy, one field per option,
// for configurations read at run time (a JSON file, say: Config reads and
// writes JSON with durations as Go duration strings such as "2s"; Observer
// and Clock are not serialised). A zero field means the field's default, so Config{} is
// the default configuration, and [WithConfig] sets only the fields that
// are not zero. Check a Config with [Config.Validate] before giving it to
// New.
type Config struct {
	// Name identifies the policy in its events (telemetry.Event.Name), so
	// that an observer counting or logging per name tells two timeouts
	// apart. "" (the default) means no name. The layer name stays
	// "timeout(2s)" either way.
	Name string

	// Duration is the most time one call may take, on Clock. 0 means the
	// duration given to [New]; else it must be > 0, and it replaces New's.
	// There is no "no timeout" value.
	Duration time.Duration

	// Abandon makes the policy return at the deadline even if the op
	// ignores its context: the op then runs on in a goroutine of its own
	// until it returns, and its result is dropped. false (the default)
	// means: cancel the op's context at the deadline and wait for the op
	// to return.
	Abandon bool

	// Clock is the source of time for the deadline. nil means
	// clock.Real(), whose deadline is the standard context.WithTimeout's.
	Clock clock.Clock

	// Observer, if not nil, receives the policy's events (see package
	// telemetry): timeout.expired when a call returns ErrTimeout, and, with
	// Abandon, timeout.abandoned when the policy returns while the op runs
	// on. It is called on the caller's goroutine, before Do returns. nil
	// (the default) means no events, at no cost.
	Observer telemetry.Observer
}

// Validate reports whether c is a valid configuration: nil if it is, else
// an error naming the field at fault and its value, the same message [New]
// panics with. Zero fields are valid: each means its default.
func (c Config) Validate() error {
	if c.Duration < 0 {
		return fmt.Errorf("timeout: Duration must be > 0, or 0 for New's duration, got %s", jsonconf.Duration(c.Duration))
	}
	return nil
}

// MarshalJSON writes c as a JSON object: its non-zero fields by their Go
// names, Duration as a Go duration string ("2s"); Observer and Clock are
// left out.
func (c Config) MarshalJSON() ([]byte, error) { return jsonconf.Marshal(c) }

// UnmarshalJSON reads a JSON object that [Config.MarshalJSON] wrote (field
// names match case-insensitively) into c: the fields it holds are set, the
// others left as they are. An unknown field, Observer or Clock, is an
// error.
func (c *Config) UnmarshalJSON(b []byte) error {
	return jsonconf.Unmarshal("timeout", b, c)
}

// Option configures a timeout policy built by [New]. Options are made by
// the With functions of this package and apply in order: the last one to
// set a field wins.
type Option interface{ apply(*Config) }

type option func(*Config)

func (o option) apply(c *Config) { o(c) }

// WithAbandon sets [Config.Abandon]: whether to return at the deadline
// without waiting for an op that ignores its context (default false).
func WithAbandon(abandon bool) Option { return option(func(c *Config) { c.Abandon = abandon }) }

// WithClock sets [Config.Clock]: the source of time.
// It panics if c is nil: leave the option out for clock.Real().
func WithClock(c clock.Clock) Option {
	guardopt.Clock("timeout", c)
	return option(func(cfg *Config) { cfg.Clock = c })
}

// WithName sets [Config.Name]: the policy's name in its events ("" = none).
// It panics if name is not valid UTF-8 (see telemetry.CheckName).
func WithName(name string) Option {
	guardopt.Name("timeout", name)
	return option(func(c *Config) { c.Name = name })
}

// WithObserver sets [Config.Observer]: where the policy's events go (nil =
// nowhere).
func WithObserver(o telemetry.Observer) Option {
	return option(func(c *Config) { c.Observer = o })
}

// WithConfig sets the fields of c that are not zero, and leaves the others
// as New's argument, the defaults and the options before it set them: New
// keeps its duration unless c.Duration is set.
func WithConfig(c Config) Option { return option(func(cfg *Config) { merge.NonZero(cfg, c) }) }

// configure returns the configuration of New(d, opts...), or panics with
// the message New panics with.
func configure(d time.Duration, opts []Option) Config {
	c := Config{Duration: d}
	for _, o := range opts {
		if o == nil {
			panic("timeout: New option must not be nil")
		}
		o.apply(&c)
	}
	if c.Duration == d && d <= 0 { // New's own duration; no Config replaced it
		panic(fmt.Sprintf("timeout: Duration must be > 0, got %v", d))
	}
	if err := c.Validate(); err != nil {
		panic(err.Error())
	}
	return c
}
