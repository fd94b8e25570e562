package bulkhead

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/guardopt"
	"github.com/f0b5b96b/resilience/internal/jsonconf"
	"github.com/f0b5b96b/resilience/internal/merge"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Config is the whole configuration of a [Bulkhead], one field per option,
// for configurations read at run time (it reads and writes JSON): fill it,
// check it with [Config.Validate], and pass it with [WithConfig].
//
// A zero field means the field's default, stated at the field, so Config{}
// is the default configuration; WithConfig sets only the non-zero fields.
// A bulkhead has no setting that is on by default, so no field takes
// resilience.Off: its queue and MaxWait are off unless set.
type Config struct {
	// MaxConcurrent is how many calls may hold a slot at once: 1 to
	// 1<<31 - 1. 0 means the number given to [New], which is then the
	// default that a Config read at run time may change.
	// [Bulkhead.SetLimit] changes it while the bulkhead runs.
	MaxConcurrent int

	// MaxQueue is how many callers may wait in line for a slot when all are
	// taken, served first come, first served; at most 1<<31 - 1. 0 (the
	// default) means no queue: a caller that finds every slot taken is
	// refused at once.
	MaxQueue int

	// MaxWait is the longest a caller waits in the queue before it is
	// refused with [ErrQueueTimeout]; it needs a queue (MaxQueue >= 1).
	// 0 (the default) means no limit other than the caller's context.
	MaxWait time.Duration

	// Name names the bulkhead in errors and in the policy's layer name,
	// "bulkhead(Name)". Empty (the default) leaves it unnamed.
	Name string

	// Observer, if not nil, receives the bulkhead's events (see package
	// telemetry for the table): each refusal (bulkhead.refused, Err the
	// refusal, Wait the time spent in the queue: 0 for ErrFull) and each
	// queued call that got a slot (bulkhead.queued_admitted, Wait the time
	// in the queue). A call that gets a free slot at once emits nothing.
	// Events come from the calling goroutine, never with the bulkhead's
	// lock held; a refusal costs one call of Observe, which allocates
	// nothing. nil (the default) means no events, at no cost. It is not
	// written to or read from JSON.
	Observer telemetry.Observer

	// Clock is the source of time for MaxWait (and for the waits that
	// events report). nil (the default) means clock.Real(). It is not
	// written to or read from JSON.
	Clock clock.Clock
}

// maxCount bounds MaxConcurrent and MaxQueue: each is packed into 32 bits
// of one atomic word.
const maxCount = math.MaxInt32

// Validate reports the first invalid field of c, with the message New
// would panic with, or nil if c is valid. It checks c as a whole
// configuration: zero fields as their defaults, and MaxConcurrent 0 as New's
// argument, which New checks itself.
func (c Config) Validate() error { return c.validate(false) }

// validate is Validate; built means c is the configuration New built, in
// which MaxConcurrent 0 is New's own argument and invalid.
func (c Config) validate(built bool) error {
	switch {
	case c.MaxConcurrent < 0 || c.MaxConcurrent > maxCount || built && c.MaxConcurrent == 0:
		return fmt.Errorf("bulkhead: MaxConcurrent must be between 1 and %d, got %d", maxCount, c.MaxConcurrent)
	case c.MaxQueue < 0 || c.MaxQueue > maxCount:
		return fmt.Errorf("bulkhead: MaxQueue must be between 0 (no queue) and %d, got %d", maxCount, c.MaxQueue)
	case c.MaxWait < 0:
		return fmt.Errorf("bulkhead: MaxWait must be >= 0 (0 means no limit), got %s", jsonconf.Duration(c.MaxWait))
	case c.MaxWait > 0 && c.MaxQueue == 0:
		return errors.New("bulkhead: MaxWait needs a queue (MaxQueue >= 1), got MaxQueue 0")
	}
	return nil
}

// MarshalJSON writes c as a JSON object of its non-zero fields, by their
// Go names, with MaxWait as a Go duration string ("250ms"). Observer and
// Clock are left out.
func (c Config) MarshalJSON() ([]byte, error) { return jsonconf.Marshal(c) }

// UnmarshalJSON reads what [Config.MarshalJSON] writes into c: the fields
// present set c's, absent or null ones leave c's as they are. An unknown
// field, or a duration that is not a Go duration string, is an error
// naming the field. It does not validate: call [Config.Validate].
func (c *Config) UnmarshalJSON(data []byte) error {
	// jsonconf reads field by field, never the whole struct through
	// encoding/json, so passing c itself does not recurse, and errors name
	// the type "Config".
	return jsonconf.Unmarshal("bulkhead", data, c)
}

// Option configures a [Bulkhead] in [New]. Options apply in order; when two
// set the same field, the last one wins.
type Option interface{ apply(*Config) }

type option func(*Config)

func (o option) apply(c *Config) { o(c) }

// WithMaxQueue sets [Config.MaxQueue]: how many callers may wait in line
// for a slot (0: no queue, the default).
func WithMaxQueue(n int) Option { return option(func(c *Config) { c.MaxQueue = n }) }

// WithMaxWait sets [Config.MaxWait]: the longest wait in the queue
// (without it, no limit but the context's deadline). It panics if d is 0:
// leave the option out for no limit.
func WithMaxWait(d time.Duration) Option {
	if d == 0 {
		panic("bulkhead: WithMaxWait(0s): the wait must be > 0; leave the option out for no limit but the context's deadline")
	}
	return option(func(c *Config) { c.MaxWait = d })
}

// WithName sets [Config.Name].
// It panics if name is not valid UTF-8 (see telemetry.CheckName).
func WithName(name string) Option {
	guardopt.Name("bulkhead", name)
	return option(func(c *Config) { c.Name = name })
}

// WithObserver sets [Config.Observer]: where the bulkhead's events go (nil:
// nowhere, the default).
func WithObserver(o telemetry.Observer) Option {
	return option(func(c *Config) { c.Observer = o })
}

// WithClock sets [Config.Clock], the source of time for MaxWait.
// It panics if c is nil: leave the option out for clock.Real().
func WithClock(c clock.Clock) Option {
	guardopt.Clock("bulkhead", c)
	return option(func(cfg *Config) { cfg.Clock = c })
}

// WithConfig sets the fields of c that are not zero, and only those, so it
// never erases New's argument, an earlier option or a default:
// New(5, WithConfig(Config{MaxQueue: 1})) has 5 slots and a queue of 1, and
// c.MaxConcurrent, when set, replaces New's argument. Options after it
// change single fields again.
func WithConfig(c Config) Option { return option(func(cfg *Config) { merge.NonZero(cfg, c) }) }
