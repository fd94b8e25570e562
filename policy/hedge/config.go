package hedge

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/guardopt"
	"github.com/f0b5b96b/resilience/internal/jsonconf"
	"github.com/f0b5b96b/resilience/internal/merge"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Config is the configuration of a hedge policy for results of type T,
// one field per option, for configurations read at run time (a JSON file,
// say: Config reads and writes JSON with durations as Go duration strings
// such as "50ms"; Accept, Clock and Observer are not serialised). A zero
// field means the field's default, so Config[T]{} is the default
// configuration, and [WithConfig] sets only the fields that are not zero.
// Check a Config with [Config.Validate] before giving it to New.
type Config[T any] struct {
	// Name identifies the policy in its events (telemetry.Event.Name), so
	// that an observer counting or logging per name tells two hedges
	// apart. "" (the default) means no name. The layer name stays
	// "hedge(50ms)" (or "hedge(p95)") either way, as a timeout's does.
	Name string

	// Delay is how long to wait for an accepted result before starting the
	// next attempt (a hedge), measured on Clock from the start of the
	// attempt before; with Quantile, only until the quantile can be
	// measured. 0 means the delay given to [New]; else it must be > 0, and
	// it replaces New's.
	Delay time.Duration

	// MaxHedges is the most attempts started in addition to the first: a
	// call makes at most 1+MaxHedges attempts. 0 means 1; else it must be
	// in [1, MaxHedgesLimit] (10): attempts that fail at once start the
	// next one at once, so a large MaxHedges multiplies one call into as
	// many calls of a failing dependency, within a millisecond.
	MaxHedges int

	// MaxWait is the longest Retry-After hint that an attempt's failure
	// may make the next attempt wait for (see resilience.RetryAfter: an
	// HTTP 429 or 503 with Retry-After, say): a hint of at most MaxWait
	// starts the next attempt no earlier than the hint from the failure; a
	// longer one (resilience.Never included) starts no more attempts, and
	// the call returns as soon as none runs. 0 means the Delay, so that a
	// hint holds the next attempt no longer than a slow attempt does;
	// resilience.Off (-1) switches the cap off: every hint is waited for
	// (still not past the caller's deadline). Else it must be > 0. A
	// refusal of an inner guard starts no more attempts, whatever its hint
	// and MaxWait.
	MaxWait time.Duration

	// Accept reports whether an attempt's result ends the race: the first
	// accepted result, in order of completion, is the call's result. A
	// result that is not accepted is a failure: it starts the next attempt
	// at once, if any is left (but see MaxWait, and [New] for refusals).
	// nil means: accept exactly the results whose
	// error is nil. Accept may be called from several goroutines at once.
	Accept func(v T, err error) bool

	// Clock is the source of time for the delay and for the attempts'
	// latencies. nil means clock.Real().
	Clock clock.Clock

	// Quantile, when set, makes the delay follow the latency of the
	// policy's own attempts: the delay is this quantile (0.95 for the
	// 95th percentile) of the latencies of the last 1024 attempts, within
	// MinDelay and MaxDelay, recomputed every 32 attempts once 100 have
	// been measured; until then it is Delay (within the same bounds). An
	// attempt's latency runs from its start until it returned an accepted
	// result, or until it was cancelled because another attempt won (a
	// lower bound of its latency, so the slow attempts that hedging cuts
	// off still count as slow); failed attempts are not counted. In
	// (0, 1); 0 (the default) means a fixed delay: Delay.
	Quantile float64

	// MinDelay and MaxDelay bound the delay that Quantile sets: it never
	// falls below MinDelay (0, the default: no lower bound) nor rises
	// above MaxDelay (0, the default: no upper bound). They need a
	// Quantile.
	MinDelay, MaxDelay time.Duration

	// Budget caps the hedges to a fraction of the calls, so that a slow
	// dependency does not get up to 1+MaxHedges times its load when it
	// can least take it: each call adds Budget of a hedge to the budget,
	// which holds at most max(1, 10 × Budget) hedges (full at New), and
	// each attempt after a call's first takes one; a call that finds the
	// budget empty starts no more attempts. Over any run of calls, the
	// hedges started are at most Budget × calls + max(1, 10 × Budget).
	// Finite and at least 1e-6, the budget's resolution (it counts in
	// millionths of a hedge); 0.1: a hedge per ten calls. 0 (the default)
	// means no budget.
	Budget float64

	// Observer, if not nil, receives the policy's events (see package
	// telemetry) for the calls that hedge: hedge.launched when a hedge
	// starts, hedge.won when an attempt's result is accepted, and
	// hedge.losers_cancelled when attempts still running are cancelled
	// because another won. A call that starts no hedge reports nothing.
	// Events come in the order they happened, from the goroutine that
	// caused them (the caller's, the timer's or an attempt's), one at a
	// time per call and never with the call's lock held, before Do
	// returns. nil (the default) means no events, at no cost.
	Observer telemetry.Observer
}

// MaxHedgesLimit is the largest MaxHedges: a call makes at most 11
// attempts. Hedging pays for a tail latency with load; past a few hedges
// it only adds load (gRPC's hedging policy caps a call at 5 attempts).
const MaxHedgesLimit = 10

// Validate reports whether c is a valid configuration: nil if it is, else
// an error naming the first field at fault and its value, the same message
// [New] panics with. Zero fields are valid: each means its default.
func (c Config[T]) Validate() error {
	switch {
	case c.Delay < 0:
		return fmt.Errorf("hedge: Delay must be > 0, or 0 for New's delay, got %s", jsonconf.Duration(c.Delay))
	case c.MaxHedges < 0 || c.MaxHedges > MaxHedgesLimit:
		return fmt.Errorf("hedge: MaxHedges must be in [1, %d], or 0 for the default 1, got %d", MaxHedgesLimit, c.MaxHedges)
	case c.MaxWait < 0 && c.MaxWait != resilience.Off:
		return fmt.Errorf("hedge: MaxWait must be > 0, 0 for the Delay or Off (-1) for no cap, got %v", c.MaxWait)
	case c.Quantile != 0 && !(c.Quantile > 0 && c.Quantile < 1):
		return fmt.Errorf("hedge: Quantile must be in (0, 1), or 0 for a fixed delay, got %v", c.Quantile)
	case c.MinDelay < 0:
		return fmt.Errorf("hedge: MinDelay must be >= 0, got %v", c.MinDelay)
	case c.MaxDelay < 0:
		return fmt.Errorf("hedge: MaxDelay must be >= 0 (0 means no bound), got %v", c.MaxDelay)
	case c.MaxDelay > 0 && c.MaxDelay < c.MinDelay:
		return fmt.Errorf("hedge: MaxDelay must be >= MinDelay, got MaxDelay %v and MinDelay %v", c.MaxDelay, c.MinDelay)
	case (c.MinDelay > 0 || c.MaxDelay > 0) && c.Quantile == 0:
		return errors.New("hedge: MinDelay and MaxDelay need a Quantile, got Quantile 0")
	case c.Budget != 0 && !(c.Budget > 0 && c.Budget <= math.MaxFloat64):
		return fmt.Errorf("hedge: Budget must be finite and > 0, or 0 for no budget, got %v", c.Budget)
	case c.Budget != 0 && c.Budget < 1e-6:
		return fmt.Errorf("hedge: Budget must be at least 1e-6 (the budget counts in millionths of a hedge), or 0 for no budget, got %v", c.Budget)
	}
	return nil
}

// MarshalJSON writes c as a JSON object: its non-zero fields by their Go
// names, durations as Go duration strings ("50ms"; "off" for Off); Accept,
// Clock and Observer are left out.
func (c Config[T]) MarshalJSON() ([]byte, error) { return jsonconf.Marshal(c) }

// UnmarshalJSON reads a JSON object that [Config.MarshalJSON] wrote (field
// names match case-insensitively) into c: the fields it holds are set, the
// others left as they are. An unknown field, or one that cannot be
// serialised (Accept, Clock, Observer), is an error.
func (c *Config[T]) UnmarshalJSON(b []byte) error {
	return jsonconf.Unmarshal("hedge", b, c)
}

// Option configures a hedge policy, built by [New]. Options are made by
// the With functions of this package and apply in order: the last one to
// set a field wins.
//
// The options that carry a result type T ([WithAccept], [WithConfig]) are
// generic in it, inferred from their argument; given to a New of another
// T, they make New panic, naming both types. The others go to a New of
// any T.
type Option interface{ apply(*settings) }

type option func(*settings)

func (o option) apply(s *settings) { o(s) }

// settings is what the options set: a Config without its result type.
type settings struct {
	delay              time.Duration
	maxHedges          int
	maxWait            time.Duration
	accept             any // a func(T, error) bool for the policy's T, or nil
	clock              clock.Clock
	quantile           float64
	minDelay, maxDelay time.Duration
	budget             float64
	name               string
	observer           telemetry.Observer

	// configs holds the result type of each WithConfig, for New to check
	// against its own (Accept's type says its own).
	configs []reflect.Type
}

// WithMaxHedges sets [Config.MaxHedges]: the most attempts started after the
// first one, in [1, MaxHedgesLimit] (without it, 1). It panics if n is
// out of that range, 0 included, naming the value.
func WithMaxHedges(n int) Option {
	if n < 1 || n > MaxHedgesLimit {
		panic(fmt.Sprintf("hedge: WithMaxHedges(%d): the hedges must be in [1, %d]; leave the option out for the default, 1", n, MaxHedgesLimit))
	}
	return option(func(s *settings) { s.maxHedges = n })
}

// WithMaxWait sets [Config.MaxWait]: the longest Retry-After hint that
// the next attempt waits for; a longer one starts no more attempts
// (resilience.Off = no cap). Without it, the Delay. It panics if d is 0 or
// negative other than Off.
func WithMaxWait(d time.Duration) Option {
	if d <= 0 && d != resilience.Off {
		panic(fmt.Sprintf("hedge: WithMaxWait(%v): the wait must be > 0, or resilience.Off for no cap; leave the option out for the default, the Delay", d))
	}
	return option(func(s *settings) { s.maxWait = d })
}

// WithClock sets [Config.Clock]: the source of time.
// It panics if c is nil: leave the option out for clock.Real().
func WithClock(c clock.Clock) Option {
	guardopt.Clock("hedge", c)
	return option(func(s *settings) { s.clock = c })
}

// WithQuantile sets [Config.Quantile]: the delay becomes the q-quantile
// of the policy's own attempts' latencies (WithQuantile(0.95): their 95th
// percentile), within [WithMinDelay] and [WithMaxDelay]. q is in (0, 1). It
// panics if q is 0 (leave the option out for a fixed delay); New panics on
// other invalid values.
func WithQuantile(q float64) Option {
	if q == 0 {
		panic("hedge: WithQuantile(0): the quantile must be in (0, 1); leave the option out for a fixed delay")
	}
	return option(func(s *settings) { s.quantile = q })
}

// WithMinDelay sets [Config.MinDelay]: the lowest delay that a Quantile
// sets (without it, no lower bound). It needs [WithQuantile] (New panics
// otherwise). It panics if d <= 0.
func WithMinDelay(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("hedge: WithMinDelay(%v): the bound must be > 0; leave the option out for no lower bound", d))
	}
	return option(func(s *settings) { s.minDelay = d })
}

// WithMaxDelay sets [Config.MaxDelay]: the highest delay that a Quantile
// sets (without it, or with resilience.Off, no upper bound). It needs
// [WithQuantile] (New panics otherwise). It panics if d is 0 or negative
// other than Off.
func WithMaxDelay(d time.Duration) Option {
	switch {
	case d <= 0 && d != resilience.Off:
		panic(fmt.Sprintf("hedge: WithMaxDelay(%v): the bound must be > 0, or resilience.Off for none; leave the option out for no upper bound", d))
	case d == resilience.Off:
		d = 0 // Config.MaxDelay 0: no upper bound
	}
	return option(func(s *settings) { s.maxDelay = d })
}

// WithBudget sets [Config.Budget]: hedges at most fraction of the calls,
// finite and at least 1e-6 (without it, no budget). It panics if
// fraction is 0; New panics on any other invalid fraction.
func WithBudget(fraction float64) Option {
	if fraction == 0 {
		panic("hedge: WithBudget(0): the fraction must be finite and > 0; leave the option out for no budget")
	}
	return option(func(s *settings) { s.budget = fraction })
}

// WithName sets [Config.Name]: the policy's name in its events ("" =
// none).
// It panics if name is not valid UTF-8 (see telemetry.CheckName).
func WithName(name string) Option {
	guardopt.Name("hedge", name)
	return option(func(s *settings) { s.name = name })
}

// WithObserver sets [Config.Observer]: where the policy's events go (nil =
// nowhere).
func WithObserver(o telemetry.Observer) Option {
	return option(func(s *settings) { s.observer = o })
}

// WithAccept sets [Config.Accept]: which results end the race (nil = those
// without error). T is inferred from accept; the option goes to a New of
// that T only (New panics otherwise).
func WithAccept[T any](accept func(v T, err error) bool) Option {
	return option(func(s *settings) { s.accept = accept })
}

// WithConfig sets the fields of c that are not zero, and leaves the others
// as New's arguments, the defaults and the options before it set them: New
// keeps its delay unless c.Delay is set. T is inferred from c; the option
// goes to a New of that T only (New panics otherwise).
func WithConfig[T any](c Config[T]) Option {
	return option(func(s *settings) {
		cur := configOf[T](s)
		merge.NonZero(&cur, c)
		accept := s.accept
		if cur.Accept != nil {
			accept = cur.Accept
		}
		*s = settings{delay: cur.Delay, maxHedges: cur.MaxHedges, maxWait: cur.MaxWait, accept: accept, clock: cur.Clock,
			quantile: cur.Quantile, minDelay: cur.MinDelay, maxDelay: cur.MaxDelay, budget: cur.Budget,
			name: cur.Name, observer: cur.Observer, configs: append(s.configs, reflect.TypeFor[T]())}
	})
}

// configOf returns the configuration that s holds, for results of type T;
// its Accept is nil if s holds none for T.
func configOf[T any](s *settings) Config[T] {
	accept, _ := s.accept.(func(T, error) bool)
	return Config[T]{Delay: s.delay, MaxHedges: s.maxHedges, MaxWait: s.maxWait, Accept: accept, Clock: s.clock,
		Quantile: s.quantile, MinDelay: s.minDelay, MaxDelay: s.maxDelay, Budget: s.budget,
		Name: s.name, Observer: s.observer}
}

// configure returns the configuration of New[T](delay, opts...), or panics
// with the message New panics with.
func configure[T any](delay time.Duration, opts []Option) Config[T] {
	s := settings{delay: delay}
	for _, o := range opts {
		if o == nil {
			panic("hedge: New option must not be nil")
		}
		o.apply(&s)
	}
	for _, t := range s.configs {
		if t != reflect.TypeFor[T]() {
			panic(fmt.Sprintf("hedge: WithConfig for results of type %v given to New[%v]", t, reflect.TypeFor[T]()))
		}
	}
	if _, ok := s.accept.(func(T, error) bool); s.accept != nil && !ok {
		panic(fmt.Sprintf("hedge: WithAccept for results of type %v given to New[%v]", reflect.TypeOf(s.accept).In(0), reflect.TypeFor[T]()))
	}
	c := configOf[T](&s)
	if c.Delay == delay && delay <= 0 { // New's own delay; no Config replaced it
		panic(fmt.Sprintf("hedge: Delay must be > 0, got %v", delay))
	}
	if err := c.Validate(); err != nil {
		panic(err.Error())
	}
	if c.MaxHedges == 0 {
		c.MaxHedges = 1
	}
	return c
}
