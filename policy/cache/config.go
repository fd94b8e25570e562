package cache

import (
	"context"
	"fmt"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/guardopt"
	"github.com/f0b5b96b/resilience/internal/jsonconf"
	"github.com/f0b5b96b/resilience/internal/merge"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Defaults of the settings whose zero means a default.
const (
	DefaultMaxEntries   = 10_000
	DefaultMaxRefreshes = 16
	DefaultLoadTimeout  = 30 * time.Second
)

// Config is the whole configuration of a [Cache], one field per option,
// for configurations read at run time (it reads and writes JSON): fill it,
// check it with [Config.Validate], and pass it with [WithConfig].
//
// A zero field means the field's default, stated at the field, so Config{}
// is the default configuration (with New's TTL); WithConfig sets only the
// non-zero fields. Only LoadTimeout takes resilience.Off.
type Config struct {
	// TTL is how long a stored value is fresh: served as a hit without
	// calling the dependency. 0 means the TTL given to [New].
	TTL time.Duration

	// MaxEntries bounds the number of entries held (values, negative
	// entries and stale values kept for StaleWhileRevalidate or
	// StaleIfError), over all the store's shards: MaxEntries distinct
	// keys always fit; beyond it an entry is evicted, chosen by second
	// chance, an approximation of least recently used (see the package
	// documentation).
	// 0 means DefaultMaxEntries (10 000).
	MaxEntries int

	// MaxBytes bounds the total size of the values held, as [WithSize]'s
	// function measures them (it needs one). A value larger than MaxBytes
	// on its own is returned to its callers but not stored. 0 (the
	// default) means no bound on bytes.
	MaxBytes int64

	// StaleWhileRevalidate is how long after its TTL a value is still
	// served at once, marked stale, while one refresh per key runs in the
	// background. 0 (the default) means off: an expired value is a miss.
	StaleWhileRevalidate time.Duration

	// StaleIfError is how long after its TTL a value may be served,
	// marked stale, in place of a load that failed (an error of the
	// pipeline below, a guard's refusal). 0 (the default) means off.
	StaleIfError time.Duration

	// MaxRefreshes bounds the background refreshes of
	// StaleWhileRevalidate running at once, over all keys; a stale hit
	// that finds them all busy serves the stale value and starts none.
	// 0 means DefaultMaxRefreshes (16).
	MaxRefreshes int

	// LoadTimeout bounds each load (a call of the dependency for a miss
	// or a refresh). A load does not run under any one caller's context:
	// it runs under context.WithoutCancel of the context of the caller
	// that started it (so its values reach the dependency), canceled
	// after LoadTimeout on Clock. 0 means DefaultLoadTimeout (30s);
	// resilience.Off means no bound beyond the pipeline's own.
	LoadTimeout time.Duration

	// NegativeTTL is how long an error that NegativeIf accepts is cached:
	// later calls of its key get the same error without calling the
	// dependency. Both or neither must be set ([WithNegativeTTL],
	// [WithNegativeIf]). 0 (the
	// default) means errors are not cached.
	NegativeTTL time.Duration

	// NegativeIf chooses the errors cached for NegativeTTL (a "not
	// found"). It is not written to or read from JSON.
	NegativeIf func(error) bool

	// StaleIf chooses the load errors for which StaleIfError serves a
	// stale value. nil (the default) means every error. It is not written
	// to or read from JSON.
	StaleIf func(error) bool

	// Key returns the key of a call through [Cache.Policy] from its
	// context. nil (the default) means the key set by [Key]. An empty
	// key bypasses the cache. A panic in Key goes up to the caller; the
	// cache is not touched. It is not written to or read from JSON.
	Key func(ctx context.Context) string

	// Size, set by [WithSize], is a func(T) int64 that measures a value
	// of the cache's type T for MaxBytes and Stats.Bytes. nil (the
	// default) counts every value as 0 bytes. New panics if it is not a
	// func(T) int64. It is not written to or read from JSON.
	Size any

	// Store, set by [WithStore], is a Store[T] that holds the entries in
	// place of the in-memory default. New panics if it is not a Store[T].
	// MaxEntries and MaxBytes bound the in-memory store only: a Store
	// given here bounds itself. It is not written to or read from JSON.
	Store any

	// Name names the cache in events and in the policy's layer name,
	// "cache(Name)". Empty (the default) leaves it unnamed.
	Name string

	// Observer, if not nil, receives the cache's events (see [EventHit]
	// and the others), from the calling goroutine, or for
	// cache.evicted and cache.refresh_failed from the load's goroutine,
	// where a panic of the observer is not recovered. nil (the default)
	// means no events, at no cost. It is not written to or read from
	// JSON.
	Observer telemetry.Observer

	// Clock is the source of time for TTLs, staleness and LoadTimeout.
	// nil (the default) means clock.Real(). It is not written to or read
	// from JSON.
	Clock clock.Clock
}

// Validate reports the first invalid field of c, with the message New
// would panic with, or nil if c is valid. Zero fields are their defaults;
// TTL 0 is New's argument, which New checks itself.
func (c Config) Validate() error {
	switch {
	case c.TTL < 0:
		return fmt.Errorf("cache: TTL must be > 0, got %s", jsonconf.Duration(c.TTL))
	case c.MaxEntries < 0:
		return fmt.Errorf("cache: MaxEntries must be >= 1, got %d", c.MaxEntries)
	case c.MaxBytes < 0:
		return fmt.Errorf("cache: MaxBytes must be >= 1 (0: no bound), got %d", c.MaxBytes)
	case c.MaxBytes > 0 && c.Size == nil:
		return fmt.Errorf("cache: MaxBytes %d needs a size function (WithSize)", c.MaxBytes)
	case c.StaleWhileRevalidate < 0:
		return fmt.Errorf("cache: StaleWhileRevalidate must be >= 0 (0: off), got %s", jsonconf.Duration(c.StaleWhileRevalidate))
	case c.StaleIfError < 0:
		return fmt.Errorf("cache: StaleIfError must be >= 0 (0: off), got %s", jsonconf.Duration(c.StaleIfError))
	case c.MaxRefreshes < 0:
		return fmt.Errorf("cache: MaxRefreshes must be >= 1, got %d", c.MaxRefreshes)
	case c.LoadTimeout < -1:
		return fmt.Errorf("cache: LoadTimeout must be > 0 or off, got %s", jsonconf.Duration(c.LoadTimeout))
	case c.NegativeTTL < 0:
		return fmt.Errorf("cache: NegativeTTL must be >= 0 (0: off), got %s", jsonconf.Duration(c.NegativeTTL))
	case c.NegativeTTL > 0 && c.NegativeIf == nil:
		return fmt.Errorf("cache: NegativeTTL %s needs NegativeIf (WithNegativeIf)", c.NegativeTTL)
	case c.NegativeTTL == 0 && c.NegativeIf != nil:
		return fmt.Errorf("cache: NegativeIf needs NegativeTTL > 0 (WithNegativeTTL)")
	case c.Store != nil && (c.MaxEntries > 0 || c.MaxBytes > 0):
		return fmt.Errorf("cache: MaxEntries and MaxBytes bound the in-memory store; a Store (WithStore) bounds itself")
	}
	return nil
}

// MarshalJSON writes c as a JSON object of its non-zero fields, by their
// Go names, with durations as Go duration strings ("250ms", "off").
// Functions, Size, Store, Observer and Clock are left out.
func (c Config) MarshalJSON() ([]byte, error) { return jsonconf.Marshal(c) }

// UnmarshalJSON reads what [Config.MarshalJSON] writes into c: the fields
// present set c's, absent or null ones leave c's as they are. An unknown
// field, or a duration that is not a Go duration string, is an error
// naming the field. It does not validate: call [Config.Validate].
func (c *Config) UnmarshalJSON(data []byte) error { return jsonconf.Unmarshal("cache", data, c) }

// Option configures a [Cache] in [New]. Options apply in order; when two
// set the same field, the last one wins.
type Option interface{ apply(*Config) }

type option func(*Config)

func (o option) apply(c *Config) { o(c) }

func positive(name string, d time.Duration, why string) {
	if d <= 0 {
		panic(fmt.Sprintf("cache: %s(%s): %s", name, jsonconf.Duration(d), why))
	}
}

// WithMaxEntries sets [Config.MaxEntries]. It panics if n < 1.
func WithMaxEntries(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("cache: WithMaxEntries(%d): the bound must be >= 1; leave the option out for %d", n, DefaultMaxEntries))
	}
	return option(func(c *Config) { c.MaxEntries = n })
}

// WithMaxBytes sets [Config.MaxBytes]; it needs [WithSize]. It panics if
// n < 1: leave the option out for no bound on bytes.
func WithMaxBytes(n int64) Option {
	if n < 1 {
		panic(fmt.Sprintf("cache: WithMaxBytes(%d): the bound must be >= 1; leave the option out for no bound", n))
	}
	return option(func(c *Config) { c.MaxBytes = n })
}

// WithSize sets [Config.Size]: size measures a value in bytes (or any
// unit MaxBytes uses). T is inferred from size; the option goes to a New
// of that T only (New panics otherwise). It panics if size is nil. size
// is called once per value stored, never with a lock held, and must not
// return a negative number (the value is then not stored).
func WithSize[T any](size func(T) int64) Option {
	if size == nil {
		panic("cache: WithSize(nil): size must not be nil")
	}
	return option(func(c *Config) { c.Size = size })
}

// WithStaleWhileRevalidate sets [Config.StaleWhileRevalidate]. It panics
// if d <= 0: leave the option out to keep it off.
func WithStaleWhileRevalidate(d time.Duration) Option {
	positive("WithStaleWhileRevalidate", d, "the window must be > 0; leave the option out to keep it off")
	return option(func(c *Config) { c.StaleWhileRevalidate = d })
}

// WithStaleIfError sets [Config.StaleIfError]. It panics if d <= 0:
// leave the option out to keep it off.
func WithStaleIfError(d time.Duration) Option {
	positive("WithStaleIfError", d, "the window must be > 0; leave the option out to keep it off")
	return option(func(c *Config) { c.StaleIfError = d })
}

// WithStaleIf sets [Config.StaleIf]: the load errors for which
// StaleIfError serves a stale value (without it, every error). It panics
// if staleIf is nil.
func WithStaleIf(staleIf func(error) bool) Option {
	if staleIf == nil {
		panic("cache: WithStaleIf(nil): staleIf must not be nil; leave the option out for every error")
	}
	return option(func(c *Config) { c.StaleIf = staleIf })
}

// WithMaxRefreshes sets [Config.MaxRefreshes]. It panics if n < 1.
func WithMaxRefreshes(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("cache: WithMaxRefreshes(%d): the bound must be >= 1; leave the option out for %d", n, DefaultMaxRefreshes))
	}
	return option(func(c *Config) { c.MaxRefreshes = n })
}

// WithLoadTimeout sets [Config.LoadTimeout]; resilience.Off removes the
// bound. It panics if d is 0 or below -1.
func WithLoadTimeout(d time.Duration) Option {
	if d == 0 || d < -1 {
		panic(fmt.Sprintf("cache: WithLoadTimeout(%s): the bound must be > 0, or resilience.Off for none; leave the option out for %s", jsonconf.Duration(d), DefaultLoadTimeout))
	}
	return option(func(c *Config) { c.LoadTimeout = d })
}

// WithNegativeTTL sets [Config.NegativeTTL]: errors that NegativeIf
// accepts are cached for ttl, and every call of the key until then gets
// the same error value. A cached error replaces the key's value, which
// StaleIfError then no longer serves. It needs [WithNegativeIf] (New
// panics otherwise). It panics if ttl <= 0.
func WithNegativeTTL(ttl time.Duration) Option {
	positive("WithNegativeTTL", ttl, "the TTL must be > 0; leave the option out to cache no error")
	return option(func(c *Config) { c.NegativeTTL = ttl })
}

// WithNegativeIf sets [Config.NegativeIf]: the errors cached for
// NegativeTTL (a "not found"). It needs [WithNegativeTTL] (New panics
// otherwise). It panics if is is nil.
func WithNegativeIf(is func(error) bool) Option {
	if is == nil {
		panic("cache: WithNegativeIf(nil): is must not be nil")
	}
	return option(func(c *Config) { c.NegativeIf = is })
}

// WithKey sets [Config.Key]: how [Cache.Policy] finds a call's key in its
// context. It panics if key is nil.
func WithKey(key func(ctx context.Context) string) Option {
	if key == nil {
		panic("cache: WithKey(nil): key must not be nil")
	}
	return option(func(c *Config) { c.Key = key })
}

// WithStore sets [Config.Store]: s holds the entries in place of the
// in-memory store. T is inferred from s. It panics if s is nil.
func WithStore[T any](s Store[T]) Option {
	if s == nil {
		panic("cache: WithStore(nil): the store must not be nil")
	}
	return option(func(c *Config) { c.Store = s })
}

// WithName sets [Config.Name]. It panics if name is not valid UTF-8.
func WithName(name string) Option {
	guardopt.Name("cache", name)
	return option(func(c *Config) { c.Name = name })
}

// WithObserver sets [Config.Observer] (nil: no events, the default).
func WithObserver(o telemetry.Observer) Option {
	return option(func(c *Config) { c.Observer = o })
}

// WithClock sets [Config.Clock], the source of time.
// It panics if c is nil: leave the option out for clock.Real().
func WithClock(c clock.Clock) Option {
	guardopt.Clock("cache", c)
	return option(func(cfg *Config) { cfg.Clock = c })
}

// WithConfig sets the fields of c that are not zero, and only those, so it
// never erases New's TTL, an earlier option or a default.
func WithConfig(c Config) Option { return option(func(cfg *Config) { merge.NonZero(cfg, c) }) }
