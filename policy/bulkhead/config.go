package bulkhead

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// Config is the whole configuration of a [Bulkhead], for configurations
// read at run time: fill it, check it with [Config.Validate], and pass it
// with [WithConfig]. Each field has an Option that sets it alone.
type Config struct {
	// MaxConcurrent is how many calls may hold a slot at once: at least 1
	// and at most 1<<31 - 1. New sets it from its argument.
	MaxConcurrent int

	// MaxQueue is how many callers may wait in line for a slot when all are
	// taken, served first come, first served. 0 (the default) means no
	// queue: a caller that finds every slot taken is refused at once.
	// At most 1<<31 - 1.
	MaxQueue int

	// MaxWait is the longest a caller waits in the queue before it is
	// refused with [ErrFull]. 0 (the default) means no limit other than
	// the caller's context.
	MaxWait time.Duration

	// Name names the bulkhead in errors and in the policy's layer name,
	// "bulkhead(Name)". Empty (the default) leaves it unnamed.
	Name string

	// Clock is the source of time for MaxWait. nil (the default) means
	// clock.Real().
	Clock clock.Clock
}

// maxCount bounds MaxConcurrent and MaxQueue: each is packed into 32 bits
// of one atomic word.
const maxCount = math.MaxInt32

// Validate reports the first invalid field of c, with the message New
// would panic with, or nil if c is valid.
func (c Config) Validate() error {
	switch {
	case c.MaxConcurrent < 1 || c.MaxConcurrent > maxCount:
		return fmt.Errorf("bulkhead: MaxConcurrent must be between 1 and %d, got %d", maxCount, c.MaxConcurrent)
	case c.MaxQueue < 0 || c.MaxQueue > maxCount:
		return fmt.Errorf("bulkhead: MaxQueue must be between 0 and %d, got %d", maxCount, c.MaxQueue)
	case c.MaxWait < 0:
		return fmt.Errorf("bulkhead: MaxWait must be >= 0, got %v", c.MaxWait)
	case c.MaxWait > 0 && c.MaxQueue == 0:
		return errors.New("bulkhead: MaxWait needs a queue (MaxQueue >= 1), got MaxQueue 0")
	}
	return nil
}

// Option configures a [Bulkhead] in [New]. Options apply in order; when two
// set the same field, the last one wins.
type Option interface{ apply(*Config) }

type option func(*Config)

func (o option) apply(c *Config) { o(c) }

// WithMaxQueue sets [Config.MaxQueue]: how many callers may wait in line
// for a slot.
func WithMaxQueue(n int) Option { return option(func(c *Config) { c.MaxQueue = n }) }

// WithMaxWait sets [Config.MaxWait]: the longest wait in the queue.
func WithMaxWait(d time.Duration) Option { return option(func(c *Config) { c.MaxWait = d }) }

// WithName sets [Config.Name].
func WithName(name string) Option { return option(func(c *Config) { c.Name = name }) }

// WithClock sets [Config.Clock], the source of time for MaxWait.
func WithClock(c clock.Clock) Option { return option(func(cfg *Config) { cfg.Clock = c }) }

// WithConfig sets every field of Config at once, MaxConcurrent included:
// New(c.MaxConcurrent, WithConfig(c)) builds the bulkhead c describes.
// Options after it change single fields again.
func WithConfig(c Config) Option { return option(func(cfg *Config) { *cfg = c }) }
