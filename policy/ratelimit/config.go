package ratelimit

import (
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

// Config is the whole configuration of a [Limiter] or a [Keyed], one field
// per option, for configurations read at run time (it reads and writes
// JSON): fill it, check it with [Config.Validate], and pass it with
// [WithConfig].
//
// A zero field means the field's default, stated at the field, so Config{}
// is the default configuration; WithConfig sets only the non-zero fields.
// Rate and Burst, which New takes as arguments, are here too: their zero
// means "as given to New". The refill is the one setting that can be
// switched off: Rate Off (resilience.Off, -1) means no refill.
type Config struct {
	// Rate is how many events per second the bucket refills. 0 means the
	// rate given to New. Otherwise it is more than 0 and at most 1e9 (one
	// per nanosecond, the resolution of time); or +Inf ("+Inf" in JSON),
	// which admits every event; or resilience.Off (-1, in JSON too), which
	// switches the refill off: the bucket gives Burst events in all, then
	// refuses for ever. (golang.org/x/time/rate's rate 0, no refill, is
	// Off here, in New's argument as in a Config, where 0 means New's
	// rate; New and SetRate given 0 panic.) Use [Every] to give it as one event per
	// duration: a Rate whose interval 1e9/Rate is within a relative 2^-50
	// (float64 rounding) of a whole number of nanoseconds is taken as
	// exactly that interval. [Limiter.SetRate] and [Keyed.SetRate] change
	// it while the limiter runs.
	Rate float64

	// Burst is the bucket's capacity: how many events may pass at once
	// after a quiet spell; at most 1<<52, and at least 1 unless Rate is
	// +Inf. A new bucket is full. 0 means the burst given to New.
	// [Limiter.SetBurst] and [Keyed.SetBurst] change it while the limiter
	// runs.
	Burst int

	// MaxWait is the longest [Limiter.Wait] (and [WaitPolicy]) waits for a
	// token: a call whose wait would be longer fails at once with
	// [ErrLimited]. 0 (the default) means no limit other than the
	// context's deadline.
	MaxWait time.Duration

	// MaxKeys is the most keys a [Keyed] tracks at once; beyond it, the
	// least recently used key is forgotten (and starts full if it comes
	// back). It bounds the number of keys, not their size: see [Keyed].
	// 0 (the default) means 8192. It takes no Off: a Keyed is always
	// bounded. A single Limiter ignores it.
	MaxKeys int

	// Name names the limiter in errors and in the policy's layer name,
	// "ratelimit(Name)". Empty (the default) leaves it unnamed.
	Name string

	// Observer, if not nil, receives the limiter's events (see package
	// telemetry for the table): each refusal (ratelimit.refused, from
	// Allow, AllowN and Wait/WaitN: Err the refusal, Wait its Retry-After,
	// 0 from Allow and AllowN, which give none) and each Wait/WaitN that
	// waited for its token (ratelimit.waited, Wait the time waited). A call
	// admitted at once emits nothing. Events come from the calling
	// goroutine, never with a lock held. A Keyed limiter's events have an
	// empty Key (naming the key would cost an allocation per event): they
	// carry the Keyed's Name. nil (the default) means no events, at no
	// cost. It is not written to or read from JSON.
	Observer telemetry.Observer

	// Clock is the source of time. nil (the default) means clock.Real(),
	// read through the runtime's monotonic clock directly (time.Since),
	// which is about twice as fast as a call to time.Now. Another clock
	// may be stepped back (a clock.Fake set back, a wall clock): a step
	// back is not charged as tokens spent, as with golang.org/x/time/rate.
	// The limiter's time never goes back: it stands still at the latest
	// reading until the clock passes it, so the tokens neither decrease
	// nor refill meanwhile (x/time/rate refills from the earlier time at
	// once). It is not written to or read from JSON.
	Clock clock.Clock
}

const (
	maxRate        = 1e9     // one event per nanosecond
	maxBurst       = 1 << 52 // bounds tau = Burst·inc below 1<<61 with inc >= 1
	defaultMaxKeys = 8192
)

// Validate reports the first invalid field of c, with the message New
// would panic with, or nil if c is valid. It checks c as a whole
// configuration: zero fields as their defaults, and Rate and Burst 0 as
// New's arguments, which New checks itself (a finite rate needs a burst of
// at least 1).
func (c Config) Validate() error { return c.validate(false) }

// validate is Validate; built means c is the configuration New built, in
// which Rate and Burst 0 are New's own arguments.
func (c Config) validate(built bool) error {
	inf := math.IsInf(c.Rate, 1)
	switch {
	case math.IsNaN(c.Rate):
		return fmt.Errorf("ratelimit: Rate must be a number of events per second, got %v", c.Rate)
	case c.Rate < 0 && c.Rate != resilience.Off:
		return fmt.Errorf("ratelimit: Rate must be >= 0 events per second, or Off (no refill), got %v", c.Rate)
	case c.Rate > maxRate && !inf:
		return fmt.Errorf("ratelimit: Rate must be at most 1e9 events per second (one per nanosecond) or +Inf, got %v", c.Rate)
	case (c.Burst < 0 || built && c.Burst == 0) && !inf:
		return fmt.Errorf("ratelimit: Burst must be >= 1 with a finite Rate, got %d", c.Burst)
	case c.Burst < 0:
		return fmt.Errorf("ratelimit: Burst must be >= 0, got %d", c.Burst)
	case c.Burst > maxBurst:
		return fmt.Errorf("ratelimit: Burst must be at most %d (1<<52), got %d", maxBurst, c.Burst)
	case c.MaxWait < 0:
		return fmt.Errorf("ratelimit: MaxWait must be >= 0 (0 means no limit), got %s", jsonconf.Duration(c.MaxWait))
	case c.MaxKeys < 0:
		return fmt.Errorf("ratelimit: MaxKeys must be >= 0 (0 means %d), got %d", defaultMaxKeys, c.MaxKeys)
	}
	return nil
}

// MarshalJSON writes c as a JSON object of its non-zero fields, by their
// Go names: MaxWait as a Go duration string ("250ms"), a Rate of +Inf as
// "+Inf", Off as -1. Observer and Clock are left out.
func (c Config) MarshalJSON() ([]byte, error) { return jsonconf.Marshal(c) }

// UnmarshalJSON reads what [Config.MarshalJSON] writes into c: the fields
// present set c's, absent or null ones leave c's as they are. An unknown
// field, a duration that is not a Go duration string, or a Rate that is
// neither a number nor "+Inf" ("Inf" and "-Inf" are read too, and
// Validate then rejects -Inf), is an error naming the field. It does not
// validate: call [Config.Validate].
func (c *Config) UnmarshalJSON(data []byte) error {
	// jsonconf reads field by field, never the whole struct through
	// encoding/json, so passing c itself does not recurse, and errors name
	// the type "Config".
	return jsonconf.Unmarshal("ratelimit", data, c)
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

// WithMaxWait sets [Config.MaxWait]: the longest Wait waits for a token
// (without it, no limit but the context's deadline). It panics if d is 0:
// leave the option out for no limit.
func WithMaxWait(d time.Duration) Option {
	if d == 0 {
		panic("ratelimit: WithMaxWait(0s): the wait must be > 0; leave the option out for no limit but the context's deadline")
	}
	return option(func(c *Config) { c.MaxWait = d })
}

// WithMaxKeys sets [Config.MaxKeys]: the most keys a Keyed tracks (without
// it, 8192). It panics if n is 0.
func WithMaxKeys(n int) Option {
	if n == 0 {
		panic("ratelimit: WithMaxKeys(0): the keys must be >= 1; leave the option out for the default, 8192")
	}
	return option(func(c *Config) { c.MaxKeys = n })
}

// WithName sets [Config.Name].
// It panics if name is not valid UTF-8 (see telemetry.CheckName).
func WithName(name string) Option {
	guardopt.Name("ratelimit", name)
	return option(func(c *Config) { c.Name = name })
}

// WithObserver sets [Config.Observer]: where the limiter's events go (nil:
// nowhere, the default).
func WithObserver(o telemetry.Observer) Option {
	return option(func(c *Config) { c.Observer = o })
}

// WithClock sets [Config.Clock], the source of time.
// It panics if c is nil: leave the option out for clock.Real().
func WithClock(c clock.Clock) Option {
	guardopt.Clock("ratelimit", c)
	return option(func(cfg *Config) { cfg.Clock = c })
}

// WithConfig sets the fields of c that are not zero, and only those, so it
// never erases New's rate and burst, an earlier option or a default:
// New(10, 5, WithConfig(Config{MaxWait: time.Second})) refills 10 a second
// up to 5, and c.Rate and c.Burst, when set, replace New's. Options after
// it change single fields again.
func WithConfig(c Config) Option { return option(func(cfg *Config) { merge.NonZero(cfg, c) }) }

// build applies opts over rate and burst, given to the constructor named
// ctor, and panics with Validate's message if the configuration it builds
// is invalid, or naming ctor if the rate is New's 0 (a Config's Rate 0 is
// New's; a Config with a Rate replaces it).
func build(ctor string, rate float64, burst int, opts []Option) Config {
	cfg := Config{Rate: rate, Burst: burst}
	for _, o := range opts {
		if o == nil {
			panic("ratelimit: option must not be nil")
		}
		o.apply(&cfg)
	}
	if cfg.Rate == 0 {
		panic(fmt.Sprintf("ratelimit: %s(0, %d): the rate must be > 0 events per second, +Inf for no limit, or resilience.Off for no refill", ctor, burst))
	}
	if err := cfg.validate(true); err != nil {
		panic(err.Error())
	}
	return cfg
}
