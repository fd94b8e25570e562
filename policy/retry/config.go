package retry

import (
	"errors"
	"fmt"
	"time"

	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
)

// Config is the whole configuration of a retry policy. [New] starts from
// [DefaultConfig] and applies its options to it in order; [WithConfig] sets
// every field at once, for configurations read at run time (check them with
// [Config.Validate] first).
//
// Fields hold their literal meaning: a zero field is not replaced by a
// default, so build a Config from DefaultConfig() rather than from Config{}
// (which is invalid: it bounds neither the attempts nor the time).
type Config struct {
	// Attempts is the most calls of the op in one execution, the first call
	// included: 1 means no retry. 0 means no limit on the number of
	// attempts, and is valid only with a MaxElapsed > 0 and a Backoff whose
	// Max is > 0 (such a schedule's delays are above 0, see
	// backoff.Schedule.Max: never an unbounded tight loop). Default: 3.
	Attempts int

	// MaxElapsed bounds one execution in time, measured on Clock from the
	// start of its first attempt, waits included: no wait starts that would
	// end later than MaxElapsed after that start. It does not cut an
	// attempt short; put a timeout policy inside the retry for that. 0
	// means no bound. Default: 0.
	MaxElapsed time.Duration

	// Backoff gives the wait before each retry: the delay before retry k is
	// the k-th delay of a fresh [backoff.Sequence] of Backoff (one per
	// execution). The zero Schedule waits 0 between attempts. Default:
	// backoff.Exponential(100*time.Millisecond, 2, 10*time.Second) with
	// backoff.Full jitter.
	Backoff backoff.Schedule

	// RetryIf reports whether an attempt's error is worth another attempt.
	// It is consulted for every failed attempt whose error is not marked
	// resilience.Permanent, even when the caller's context is done (an error it
	// rejects comes back as it is), and never sees a nil error. The
	// caller's own context errors are never retried, whatever it says. nil
	// retries every other error. Default: nil.
	RetryIf func(err error) bool

	// OnRetry, if not nil, is called before each wait with the number of
	// the attempt that failed (1 for the first call), its error and the
	// wait about to start. It runs on the caller's goroutine. Default: nil.
	OnRetry func(attempt int, err error, delay time.Duration)

	// Clock is the source of time for waits, for MaxElapsed, and for the
	// time left until the context's deadline. nil means clock.Real().
	// Default: nil.
	Clock clock.Clock

	// Budget, if not nil, is the retry budget shared by every retry policy
	// that calls the same dependency: each execution is counted in it, and
	// each retry needs its permission. nil means no budget. Default: nil.
	Budget *Budget
}

// DefaultConfig returns the configuration [New] starts from: 3 attempts, no
// bound on the elapsed time, exponential backoff from 100 ms doubling up to
// 10 s with full jitter, every error retried except the caller's own context
// errors and resilience.Permanent ones, the real clock, no budget.
func DefaultConfig() Config {
	return Config{
		Attempts: 3,
		Backoff:  backoff.Exponential(100*time.Millisecond, 2, 10*time.Second).WithJitter(backoff.Full),
	}
}

// Validate reports whether c is a valid configuration: nil if it is, else
// an error naming the first field at fault and its value, the same message
// [New] panics with.
func (c Config) Validate() error {
	switch {
	case c.Attempts < 0:
		return fmt.Errorf("retry: Attempts must be >= 0 (0 = no limit), got %d", c.Attempts)
	case c.MaxElapsed < 0:
		return fmt.Errorf("retry: MaxElapsed must be >= 0 (0 = no bound), got %v", c.MaxElapsed)
	case c.Attempts == 0 && c.MaxElapsed == 0:
		return errors.New("retry: Attempts 0 (no limit) needs a MaxElapsed > 0, got 0s")
	case c.Attempts == 0 && c.Backoff.Max() == 0:
		return fmt.Errorf("retry: Attempts 0 (no limit) needs a Backoff with Max > 0, got %v", c.Backoff)
	case c.Budget != nil && c.Budget.width == 0:
		return errors.New("retry: Budget must be made by NewBudget, got a zero Budget")
	}
	return nil
}

// Option configures a retry policy built by [New]. Options are made by the
// With functions of this package and apply in order: the last one to set a
// field wins.
type Option interface{ apply(*Config) }

type option func(*Config)

func (o option) apply(c *Config) { o(c) }

// WithAttempts sets [Config.Attempts]: the most calls of the op, the first
// included (1 = no retry, 0 = no limit, which needs WithMaxElapsed).
func WithAttempts(n int) Option { return option(func(c *Config) { c.Attempts = n }) }

// WithMaxElapsed sets [Config.MaxElapsed]: the bound on one execution's time,
// waits included (0 = no bound).
func WithMaxElapsed(d time.Duration) Option {
	return option(func(c *Config) { c.MaxElapsed = d })
}

// WithBackoff sets [Config.Backoff]: the schedule of waits between attempts.
func WithBackoff(s backoff.Schedule) Option { return option(func(c *Config) { c.Backoff = s }) }

// WithRetryIf sets [Config.RetryIf]: which errors are worth another attempt
// (nil = all but the built-in exceptions).
func WithRetryIf(f func(err error) bool) Option {
	return option(func(c *Config) { c.RetryIf = f })
}

// WithOnRetry sets [Config.OnRetry]: a hook called before each wait.
func WithOnRetry(f func(attempt int, err error, delay time.Duration)) Option {
	return option(func(c *Config) { c.OnRetry = f })
}

// WithClock sets [Config.Clock]: the source of time (nil = clock.Real()).
func WithClock(c clock.Clock) Option { return option(func(cfg *Config) { cfg.Clock = c }) }

// WithBudget sets [Config.Budget]: a retry budget shared per dependency
// (nil = no budget).
func WithBudget(b *Budget) Option { return option(func(c *Config) { c.Budget = b }) }

// WithConfig sets every field of the configuration to c's.
func WithConfig(c Config) Option { return option(func(cfg *Config) { *cfg = c }) }
