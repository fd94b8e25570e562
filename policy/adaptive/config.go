package adaptive

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/guardopt"
	"github.com/f0b5b96b/resilience/internal/jsonconf"
	"github.com/f0b5b96b/resilience/internal/merge"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Config is the whole configuration of a [Limiter], one field per
// option, for configurations read at run time (it reads and writes JSON,
// but for Algorithm and Clock): fill it, check it with [Config.Validate],
// and pass it with [WithConfig].
//
// A zero field means the field's default, stated at the field, so
// Config{} is the default configuration; WithConfig sets only the
// non-zero fields. The one setting that is on by default and can be
// switched off, BaselineMemory, takes resilience.Off.
type Config struct {
	// Algorithm decides the limit at the end of each window: a
	// [Gradient2], [Vegas] or [AIMD] value, or an Algorithm of your own.
	// nil (the default) means Gradient2{}. It is not written to or read
	// from JSON.
	Algorithm Algorithm

	// Min and Max bound the limit: 1 <= Min <= Max <= 2097151 (the limit,
	// the calls in flight and the queue share one atomic word). 0 means 1
	// for Min, and 1000 (or Min, if that is larger) for Max.
	Min, Max int

	// Initial is the limit before the first window ends, in [Min, Max].
	// 0 means 20, or Min if it is larger, or Max if it is smaller.
	Initial int

	// Window is the shortest sampling window: the limit changes at most
	// once per Window, at the first call that ends or is refused after
	// the window has lasted Window and seen MinSamples calls finish (or
	// has lasted 10 × Window, and at least 10s, whatever it saw). 0 means
	// 100ms: short enough that an overload is shed, and a capacity that
	// grows is followed, within a second or two; long enough for
	// MinSamples calls of most dependencies. A dependency that sees fewer
	// than MinSamples calls per Window gets longer windows by itself.
	Window time.Duration

	// MinSamples is how many calls must finish in a window before it may
	// end early, at least 1. 0 means 10.
	MinSamples int

	// MaxLatency is the highest latency that can be healthy (failsafe-go
	// issue 127): a window whose mean latency is above it lowers the
	// limit by at least a tenth, whatever the algorithm says, and never
	// becomes the baseline. 0 (the default) means no such bound.
	MaxLatency time.Duration

	// BaselineMemory is how long the limiter remembers a window's latency
	// as a candidate baseline: the baseline is the lowest window latency
	// of the last BaselineMemory, so it can rise only as fast as that
	// memory forgets, and an incident shorter than BaselineMemory cannot
	// drift it up at all. It falls at once to a window's latency down to
	// baseline/1.05 (about 5% lower), further only once a run of windows
	// that lasted three windows and 2 × max(Window, 1s) confirms the lower
	// latency (see [Window].Baseline), so a burst of unusually fast
	// calls cannot hold the limit down for BaselineMemory. 0 means 10 minutes; resilience.Off means for
	// ever (a dependency that becomes slower for good is then always read
	// as overloaded).
	BaselineMemory time.Duration

	// MaxQueue is how many callers may wait for admission when the limit
	// is reached, at most 2097151; they are admitted in order of priority,
	// then of arrival. 0 (the default) means no queue: a caller over the
	// limit is refused at once.
	MaxQueue int

	// MaxWait is the longest a caller waits in the queue before it is
	// refused with [ErrQueueTimeout]; it needs a queue (MaxQueue >= 1). 0
	// (the default) means no limit other than the caller's context.
	MaxWait time.Duration

	// Reserve is the share of the limit kept for calls of higher priority
	// ([ContextWithPriority]), in [0, 1): a [Normal] call is admitted
	// while fewer than ⌈limit × (1 − Reserve)⌉ calls are in flight, a
	// [Low] one while fewer than ⌈limit × (1 − Reserve)²⌉ are, a
	// [Critical] one up to the limit. 0 (the default) means no reserve:
	// every call may use the whole limit, and priorities only order the
	// queue.
	Reserve float64

	// Name names the limiter in errors and in the policy's layer name,
	// "adaptive(Name)". Empty (the default) leaves it unnamed.
	Name string

	// Observer receives the limiter's events ([EventRefused]); nil (the
	// default) reports none, at no cost. It is not written to or read
	// from JSON.
	Observer telemetry.Observer

	// Clock is the source of time for latencies, windows and MaxWait.
	// nil (the default) means clock.Real(), read through the runtime's
	// monotonic clock (time.Since). The limiter's time never runs
	// backwards: a Clock stepped back (a fake clock Set back, a wall
	// clock corrected) is read as standing still at the step and then
	// going on from there, so windows keep ending every Window. It is not
	// written to or read from JSON.
	Clock clock.Clock
}

// The defaults of Config's fields.
const (
	defaultMin            = 1
	defaultMax            = 1000
	defaultInitial        = 20
	defaultWindow         = 100 * time.Millisecond
	defaultMinSamples     = 10
	defaultBaselineMemory = 10 * time.Minute
	maxWindowFactor       = 10 // a window ends after 10 × Window (at least minMaxWindow) whatever it saw
	minMaxWindow          = 10 * time.Second

	// maxCount bounds the limit, the calls in flight and the queue: each
	// has 21 bits of one atomic word.
	maxCount = 1<<fieldBits - 1
)

// Validate reports the first invalid field of c, with the message New
// would panic with, or nil if c is valid. Zero fields are valid: each
// means its default.
func (c Config) Validate() error {
	field := func(name string, v int, want string) error {
		return fmt.Errorf("adaptive: %s must be %s, got %d", name, want, v)
	}
	switch {
	case c.Min < 0 || c.Min > maxCount:
		return field("Min", c.Min, fmt.Sprintf("between 1 and %d, or 0 for the default 1", maxCount))
	case c.Max < 0 || c.Max > maxCount:
		return field("Max", c.Max, fmt.Sprintf("between 1 and %d, or 0 for the default 1000", maxCount))
	}
	r := c.resolved()
	switch {
	case r.Max < r.Min:
		return fmt.Errorf("adaptive: Max must be >= Min, got Max %d and Min %d", r.Max, r.Min)
	case c.Initial != 0 && (c.Initial < r.Min || c.Initial > r.Max):
		return fmt.Errorf("adaptive: Initial must be between Min and Max (%d and %d), or 0 for the default, got %d", r.Min, r.Max, c.Initial)
	case c.Window < 0:
		return fmt.Errorf("adaptive: Window must be > 0, or 0 for the default 100ms, got %v", c.Window)
	case c.Window > math.MaxInt64/maxWindowFactor:
		return fmt.Errorf("adaptive: Window must be at most %v, got %v", time.Duration(math.MaxInt64/maxWindowFactor), c.Window)
	case c.MinSamples < 0:
		return field("MinSamples", c.MinSamples, ">= 1, or 0 for the default 10")
	case c.MaxLatency < 0:
		return fmt.Errorf("adaptive: MaxLatency must be > 0, or 0 for none, got %v", c.MaxLatency)
	case c.BaselineMemory < 0 && c.BaselineMemory != -1:
		return fmt.Errorf("adaptive: BaselineMemory must be > 0, 0 for the default 10m, or Off (-1) for ever, got %v", c.BaselineMemory)
	case c.MaxQueue < 0 || c.MaxQueue > maxCount:
		return field("MaxQueue", c.MaxQueue, fmt.Sprintf("between 0 (no queue) and %d", maxCount))
	case c.MaxWait < 0:
		return fmt.Errorf("adaptive: MaxWait must be >= 0 (0 means no limit), got %v", c.MaxWait)
	case c.MaxWait > 0 && c.MaxQueue == 0:
		return errors.New("adaptive: MaxWait needs a queue (MaxQueue >= 1), got MaxQueue 0")
	case !(c.Reserve >= 0 && c.Reserve < 1):
		return fmt.Errorf("adaptive: Reserve must be in [0, 1), got %v", c.Reserve)
	}
	return validateAlgorithm(c.Algorithm)
}

// resolved returns c with its defaults in place of its zero fields.
func (c Config) resolved() Config {
	if c.Algorithm == nil {
		c.Algorithm = Gradient2{}
	}
	if c.Min == 0 {
		c.Min = defaultMin
	}
	if c.Max == 0 {
		c.Max = max(defaultMax, c.Min)
	}
	if c.Initial == 0 {
		c.Initial = min(max(defaultInitial, c.Min), c.Max)
	}
	if c.Window == 0 {
		c.Window = defaultWindow
	}
	if c.MinSamples == 0 {
		c.MinSamples = defaultMinSamples
	}
	if c.BaselineMemory == 0 {
		c.BaselineMemory = defaultBaselineMemory
	}
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	return c
}

// MarshalJSON writes c as a JSON object of its non-zero fields, by their
// Go names, with durations as Go duration strings ("250ms", "off").
// Algorithm, Observer and Clock are left out.
func (c Config) MarshalJSON() ([]byte, error) { return jsonconf.Marshal(c) }

// UnmarshalJSON reads what [Config.MarshalJSON] writes into c: the fields
// present set c's, absent or null ones leave c's as they are. An unknown
// field, or a duration that is not a Go duration string, is an error
// naming the field. It does not validate: call [Config.Validate].
func (c *Config) UnmarshalJSON(data []byte) error {
	// jsonconf reads field by field, never the whole struct through
	// encoding/json, so passing c itself does not recurse.
	return jsonconf.Unmarshal("adaptive", data, c)
}

// Option configures a [Limiter] in [New]. Options apply in order; when two
// set the same field, the last one wins.
type Option interface{ apply(*Config) }

type option func(*Config)

func (o option) apply(c *Config) { o(c) }

// WithAlgorithm sets [Config.Algorithm] (nil: Gradient2{}, the default).
func WithAlgorithm(a Algorithm) Option { return option(func(c *Config) { c.Algorithm = a }) }

// WithMinLimit sets [Config.Min], the lowest the limit falls. Without it,
// 1. It panics unless 1 <= n <= 2097151; New panics if Min is above Max.
func WithMinLimit(n int) Option {
	if n < 1 || n > maxCount {
		panic(fmt.Sprintf("adaptive: WithMinLimit(%d): the bound must be between 1 and %d; leave the option out for the default, 1", n, maxCount))
	}
	return option(func(c *Config) { c.Min = n })
}

// WithMaxLimit sets [Config.Max], the highest the limit rises. Without it,
// 1000, or Min if that is larger. It panics unless 1 <= n <= 2097151; New
// panics if Max is below Min.
func WithMaxLimit(n int) Option {
	if n < 1 || n > maxCount {
		panic(fmt.Sprintf("adaptive: WithMaxLimit(%d): the bound must be between 1 and %d; leave the option out for the default, 1000", n, maxCount))
	}
	return option(func(c *Config) { c.Max = n })
}

// WithInitial sets [Config.Initial], the limit before the first window
// ends. Without it, 20 (within the bounds). It panics if n < 1.
func WithInitial(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("adaptive: WithInitial(%d): the initial limit must be >= 1; leave the option out for the default, 20", n))
	}
	return option(func(c *Config) { c.Initial = n })
}

// WithWindowDuration sets [Config.Window], the shortest sampling window.
// Without it, 100ms. It panics if d <= 0.
func WithWindowDuration(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("adaptive: WithWindowDuration(%v): the window must be > 0; leave the option out for the default, 100ms", d))
	}
	return option(func(c *Config) { c.Window = d })
}

// WithWindowCalls sets [Config.MinSamples], how many calls must finish in
// a window before it may end. Without it, 10. It panics if n < 1.
func WithWindowCalls(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("adaptive: WithWindowCalls(%d): a window must need >= 1 calls; leave the option out for the default, 10", n))
	}
	return option(func(c *Config) { c.MinSamples = n })
}

// WithMaxLatency sets [Config.MaxLatency], the highest latency that can
// be healthy. Without it, none. It panics if d <= 0.
func WithMaxLatency(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("adaptive: WithMaxLatency(%v): the latency must be > 0; leave the option out for none", d))
	}
	return option(func(c *Config) { c.MaxLatency = d })
}

// WithBaselineMemory sets [Config.BaselineMemory], how long a window's
// latency stays a candidate baseline (resilience.Off: for ever). Without
// it, 10 minutes. It panics if d is 0 or negative other than Off.
func WithBaselineMemory(d time.Duration) Option {
	if d <= 0 && d != resilience.Off {
		panic(fmt.Sprintf("adaptive: WithBaselineMemory(%v): the memory must be > 0, or resilience.Off for ever; leave the option out for the default, 10m", d))
	}
	return option(func(c *Config) { c.BaselineMemory = d })
}

// WithMaxQueue sets [Config.MaxQueue]: how many callers may wait for
// admission (0: no queue, the default).
func WithMaxQueue(n int) Option { return option(func(c *Config) { c.MaxQueue = n }) }

// WithMaxWait sets [Config.MaxWait]: the longest wait in the queue.
// Without it, no limit. It panics if d <= 0.
func WithMaxWait(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("adaptive: WithMaxWait(%v): the wait must be > 0; leave the option out for no limit", d))
	}
	return option(func(c *Config) { c.MaxWait = d })
}

// WithReserve sets [Config.Reserve]: the share of the limit kept for calls
// of higher priority (0: none, the default).
func WithReserve(share float64) Option { return option(func(c *Config) { c.Reserve = share }) }

// WithName sets [Config.Name].
// It panics if name is not valid UTF-8 (see telemetry.CheckName).
func WithName(name string) Option {
	guardopt.Name("adaptive", name)
	return option(func(c *Config) { c.Name = name })
}

// WithObserver sets [Config.Observer], the receiver of the limiter's
// events.
func WithObserver(o telemetry.Observer) Option { return option(func(c *Config) { c.Observer = o }) }

// WithClock sets [Config.Clock], the source of time.
// It panics if c is nil: leave the option out for clock.Real().
func WithClock(c clock.Clock) Option {
	guardopt.Clock("adaptive", c)
	return option(func(cfg *Config) { cfg.Clock = c })
}

// WithConfig sets the fields of c that are not zero, and only those, so
// it never erases an earlier option or a default: New(WithMaxQueue(8),
// WithConfig(Config{Max: 200})) has a queue of 8 and a Max of 200.
// Options after it change single fields again.
func WithConfig(c Config) Option { return option(func(cfg *Config) { merge.NonZero(cfg, c) }) }
