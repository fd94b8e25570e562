package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/adaptive"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/throttle"
)

// ErrNotLive is matched by the error of a reload that changes a setting
// of a guard that the guard cannot take while it runs (a breaker's
// Cooldown, a bulkhead's MaxQueue, any setting of an adaptive limiter or a
// throttler, a guard's Name): the guard would have to be replaced, losing
// its state. Give the guard a new name to replace it on purpose.
var ErrNotLive = errors.New("pipeline: the setting cannot change while the guard runs")

// guard is a guard of a version: its kind, configuration and value.
type guard struct {
	kind  string
	canon string // the configuration's canonical JSON
	cfg   any    // breaker.Config, ...
	value any    // *breaker.Breaker, ...
}

// guardKind is how to read, build and retune one kind of guard.
type guardKind struct {
	// decode reads and validates raw at path; name is the guard's name in
	// the document, its Name unless the config gives one.
	decode func(s *settings, path string, raw json.RawMessage, name string) (any, error)
	build  func(cfg any) any
	// live is the set of fields that the guard takes while it runs.
	live []string
	// tune gives the running guard v the configuration cfg, which differs
	// from its own only in live fields.
	tune func(v any, cfg any)
}

// guardKinds are the kinds of guards, by name.
var guardKinds = map[string]guardKind{
	"breaker": {
		decode: func(s *settings, path string, raw json.RawMessage, name string) (any, error) {
			var c breaker.Config
			if err := decode(path, raw, &c, breaker.Config.Validate); err != nil {
				return nil, err
			}
			c.Name = cmpOr(c.Name, name)
			c.Clock, c.Observer = cmpOr(c.Clock, s.clock), cmpOr(c.Observer, s.observer)
			return c, nil
		},
		build: func(cfg any) any { return breaker.New(breaker.WithConfig(cfg.(breaker.Config))) },
		live:  []string{"Threshold"},
		tune: func(v any, cfg any) {
			c := cfg.(breaker.Config)
			n := c.Threshold
			if n == 0 { // the default: 5 unless a ratio rule is set
				n = 5
				if c.FailureRatio > 0 || c.SlowCallRatio > 0 || c.TripIf != nil {
					n = resilience.Off
				}
			}
			v.(*breaker.Breaker).SetThreshold(n)
		},
	},
	"bulkhead": {
		decode: func(s *settings, path string, raw json.RawMessage, name string) (any, error) {
			var c bulkhead.Config
			if err := decode(path, raw, &c, bulkhead.Config.Validate); err != nil {
				return nil, err
			}
			if c.MaxConcurrent == 0 {
				return nil, pathErr(path+".MaxConcurrent", errors.New("bulkhead: MaxConcurrent must be set (1 to 2147483647): a guard from a document has no New argument to default to"))
			}
			c.Name = cmpOr(c.Name, name)
			c.Clock, c.Observer = cmpOr(c.Clock, s.clock), cmpOr(c.Observer, s.observer)
			return c, nil
		},
		build: func(cfg any) any {
			c := cfg.(bulkhead.Config)
			return bulkhead.New(c.MaxConcurrent, bulkhead.WithConfig(c))
		},
		live: []string{"MaxConcurrent"},
		tune: func(v any, cfg any) { v.(*bulkhead.Bulkhead).SetLimit(cfg.(bulkhead.Config).MaxConcurrent) },
	},
	"ratelimit": {
		decode: func(s *settings, path string, raw json.RawMessage, name string) (any, error) {
			var c ratelimit.Config
			if err := decode(path, raw, &c, ratelimit.Config.Validate); err != nil {
				return nil, err
			}
			switch {
			case c.Rate == 0:
				return nil, pathErr(path+".Rate", errors.New("ratelimit: Rate must be set (events per second, \"+Inf\", or -1 for no refill): a guard from a document has no New argument to default to"))
			case c.Burst == 0 && !math.IsInf(c.Rate, 1):
				return nil, pathErr(path+".Burst", fmt.Errorf("ratelimit: Burst must be >= 1 with a finite Rate, got 0"))
			}
			c.Name = cmpOr(c.Name, name)
			c.Clock, c.Observer = cmpOr(c.Clock, s.clock), cmpOr(c.Observer, s.observer)
			return c, nil
		},
		build: func(cfg any) any {
			c := cfg.(ratelimit.Config)
			return ratelimit.New(c.Rate, c.Burst, ratelimit.WithConfig(c))
		},
		live: []string{"Burst", "Rate"},
		tune: func(v any, cfg any) {
			l, c := v.(*ratelimit.Limiter), cfg.(ratelimit.Config)
			// A finite rate needs a burst >= 1 at every step: set a burst
			// of 0 (with a rate of +Inf) after the rate, any other before.
			if c.Burst == 0 {
				l.SetRate(c.Rate)
				l.SetBurst(c.Burst)
				return
			}
			if l.Burst() != c.Burst {
				l.SetBurst(c.Burst)
			}
			if l.Rate() != c.Rate {
				l.SetRate(c.Rate)
			}
		},
	},
	"adaptive": {
		decode: func(s *settings, path string, raw json.RawMessage, name string) (any, error) {
			var c adaptive.Config
			if err := decode(path, raw, &c, adaptive.Config.Validate); err != nil {
				return nil, err
			}
			c.Name = cmpOr(c.Name, name)
			c.Clock, c.Observer = cmpOr(c.Clock, s.clock), cmpOr(c.Observer, s.observer)
			return c, nil
		},
		build: func(cfg any) any { return adaptive.New(adaptive.WithConfig(cfg.(adaptive.Config))) },
	},
	"throttle": {
		decode: func(s *settings, path string, raw json.RawMessage, name string) (any, error) {
			var c throttle.Config
			if err := decode(path, raw, &c, throttle.Config.Validate); err != nil {
				return nil, err
			}
			c.Name = cmpOr(c.Name, name)
			c.Clock, c.Observer = cmpOr(c.Clock, s.clock), cmpOr(c.Observer, s.observer)
			return c, nil
		},
		build: func(cfg any) any { return throttle.New(throttle.WithConfig(cfg.(throttle.Config))) },
	},
}

// guardPolicy returns the policy layer of the guard g.
func guardPolicy[T any](g *guard) resilience.Policy[T] {
	switch v := g.value.(type) {
	case *breaker.Breaker:
		return breaker.Policy[T](v)
	case *bulkhead.Bulkhead:
		return bulkhead.Policy[T](v)
	case *ratelimit.Limiter:
		if g.cfg.(ratelimit.Config).MaxWait > 0 {
			return ratelimit.WaitPolicy[T](v)
		}
		return ratelimit.Policy[T](v)
	case *adaptive.Limiter:
		return adaptive.Policy[T](v)
	case *throttle.Throttler:
		return throttle.Policy[T](v)
	}
	panic(fmt.Sprintf("pipeline: guard of type %T", g.value))
}

// notLive returns the error of a reload that changes fields of a running
// guard of kind k of which some are not live, or nil if all are.
func notLive(k guardKind, kind, path string, fields []string) error {
	var fixed []string
	for _, f := range fields {
		if !slices.Contains(k.live, f) {
			fixed = append(fixed, f)
		}
	}
	if len(fixed) == 0 {
		return nil
	}
	live := "none can"
	if len(k.live) > 0 {
		live = "only " + strings.Join(k.live, " and ") + " can"
	}
	return pathErr(path+".config."+fixed[0], fmt.Errorf("%w: %s %s (%s; rename the guard to replace it, losing its state)", ErrNotLive, kind, strings.Join(fixed, ", "), live))
}

// guardKindNames lists the guard kinds, for error messages.
func guardKindNames() string {
	names := sortedKeys(guardKinds)
	return strings.Join(names, ", ")
}

func cmpOr[V comparable](v, def V) V {
	var zero V
	if v == zero {
		return def
	}
	return v
}
