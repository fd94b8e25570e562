package ratelimit

import (
	"fmt"
	"math"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// Config is the whole configuration of a [Limiter] or a [Keyed], for
// configurations read at run time: fill it, check it with
// [Config.Validate], and pass it with [WithConfig]. Each optional field
// has an Option that sets it alone.
type Config struct {
	// Rate is how many events per second the bucket refills: at least 0
	// and at most 1e9 (one per nanosecond, the resolution of time), or
	// +Inf, which admits every event. 0 means no refill: the bucket gives
	// Burst events in all and then refuses. Use [Every] to give it as one
	// event per duration: a Rate whose interval 1e9/Rate is within a
	// relative 2^-50 (float64 rounding) of a whole number of nanoseconds is
	// taken as exactly that interval. New sets it from its argument.
	Rate float64

	// Burst is the bucket's capacity: how many events may pass at once
	// after a quiet spell. It must be at least 1 when Rate is finite, and at
	// most 1<<52. A new bucket is full. New sets it from its argument.
	Burst int

	// MaxWait is the longest [Limiter.Wait] (and [WaitPolicy]) waits for a
	// token: a call whose wait would be longer fails at once with
	// [ErrLimited]. 0 (the default) means no limit other than the
	// context's deadline.
	MaxWait time.Duration

	// MaxKeys is the most keys a [Keyed] tracks at once; beyond it, the
	// least recently used key is forgotten (and starts full if it comes
	// back). It bounds the number of keys, not their size: see [Keyed].
	// 0 (the default) means 8192. A single Limiter ignores it.
	MaxKeys int

	// Name names the limiter in errors and in the policy's layer name,
	// "ratelimit(Name)". Empty (the default) leaves it unnamed.
	Name string

	// Clock is the source of time. nil (the default) means clock.Real(),
	// read through the runtime's monotonic clock directly (time.Since),
	// which is about twice as fast as a call to time.Now.
	Clock clock.Clock
}

const (
	maxRate        = 1e9     // one event per nanosecond
	maxBurst       = 1 << 52 // bounds tau = Burst·inc below 1<<61 with inc >= 1
	defaultMaxKeys = 8192
)

// Validate reports the first invalid field of c, with the message New
// would panic with, or nil if c is valid.
func (c Config) Validate() error {
	inf := math.IsInf(c.Rate, 1)
	switch {
	case math.IsNaN(c.Rate):
		return fmt.Errorf("ratelimit: Rate must be a number of events per second, got %v", c.Rate)
	case c.Rate < 0:
		return fmt.Errorf("ratelimit: Rate must be >= 0 events per second, got %v", c.Rate)
	case c.Rate > maxRate && !inf:
		return fmt.Errorf("ratelimit: Rate must be at most 1e9 events per second (one per nanosecond) or +Inf, got %v", c.Rate)
	case c.Burst < 1 && !inf:
		return fmt.Errorf("ratelimit: Burst must be >= 1 with a finite Rate, got %d", c.Burst)
	case c.Burst < 0:
		return fmt.Errorf("ratelimit: Burst must be >= 0, got %d", c.Burst)
	case c.Burst > maxBurst:
		return fmt.Errorf("ratelimit: Burst must be at most %d (1<<52), got %d", maxBurst, c.Burst)
	case c.MaxWait < 0:
		return fmt.Errorf("ratelimit: MaxWait must be >= 0, got %v", c.MaxWait)
	case c.MaxKeys < 0:
		return fmt.Errorf("ratelimit: MaxKeys must be >= 0 (0 means %d), got %d", defaultMaxKeys, c.MaxKeys)
	}
	return nil
}

// Every returns the rate, in events per second, of one event per interval:
// 1e9 / interval in nanoseconds. Every(0) is +Inf (no limit). A limiter
// given Every(d) spaces events exactly d apart once its burst is spent.
// Every panics if interval < 0.
func Every(interval time.Duration) float64 {
	if interval < 0 {
		panic(fmt.Sprintf("ratelimit: Every interval must be >= 0, got %v", interval))
	}
	if interval == 0 {
		return math.Inf(1)
	}
	return 1e9 / float64(interval)
}

// Option configures a [Limiter] in [New] or a [Keyed] in [NewKeyed].
// Options apply in order; when two set the same field, the last one wins.
type Option interface{ apply(*Config) }

type option func(*Config)

func (o option) apply(c *Config) { o(c) }

// WithMaxWait sets [Config.MaxWait]: the longest Wait waits for a token.
func WithMaxWait(d time.Duration) Option { return option(func(c *Config) { c.MaxWait = d }) }

// WithMaxKeys sets [Config.MaxKeys]: the most keys a Keyed tracks.
func WithMaxKeys(n int) Option { return option(func(c *Config) { c.MaxKeys = n }) }

// WithName sets [Config.Name].
func WithName(name string) Option { return option(func(c *Config) { c.Name = name }) }

// WithClock sets [Config.Clock], the source of time.
func WithClock(c clock.Clock) Option { return option(func(cfg *Config) { cfg.Clock = c }) }

// WithConfig sets every field of Config at once, Rate and Burst included:
// New(c.Rate, c.Burst, WithConfig(c)) builds the limiter c describes.
// Options after it change single fields again.
func WithConfig(c Config) Option { return option(func(cfg *Config) { *cfg = c }) }

// build applies opts over rate and burst, and panics with Validate's
// message if the result is invalid.
func build(rate float64, burst int, opts []Option) Config {
	cfg := Config{Rate: rate, Burst: burst}
	for _, o := range opts {
		if o == nil {
			panic("ratelimit: option must not be nil")
		}
		o.apply(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		panic(err.Error())
	}
	return cfg
}
