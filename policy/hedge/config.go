package hedge

import (
	"fmt"
	"reflect"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// Config is the whole configuration of a hedge policy for results of type
// T. [New] starts from Config[T]{Delay: delay, MaxHedges: 1} and applies
// its options to it in order; [WithConfig] sets every field at once, Delay
// included, for configurations read at run time (check them with
// [Config.Validate] first).
type Config[T any] struct {
	// Delay is how long to wait for a result before starting the next
	// attempt (the hedge), measured on Clock from the start of the previous
	// attempt. It must be > 0. New's argument sets it.
	Delay time.Duration

	// MaxHedges is the most attempts started in addition to the first: a
	// call makes at most 1+MaxHedges attempts. It must be >= 1. Default: 1.
	MaxHedges int

	// Accept reports whether an attempt's result ends the race: the first
	// accepted result, in order of completion, is the call's result. A
	// result that is not accepted is a failure: it starts the next attempt
	// at once, if any is left. nil accepts exactly the results whose error
	// is nil. Accept may be called from several goroutines at once.
	// Default: nil.
	Accept func(v T, err error) bool

	// Clock is the source of time for the delay. nil means clock.Real().
	// Default: nil.
	Clock clock.Clock
}

// Validate reports whether c is a valid configuration: nil if it is, else
// an error naming the first field at fault and its value, the same message
// [New] panics with.
func (c Config[T]) Validate() error {
	switch {
	case c.Delay <= 0:
		return fmt.Errorf("hedge: Delay must be > 0, got %v", c.Delay)
	case c.MaxHedges < 1:
		return fmt.Errorf("hedge: MaxHedges must be >= 1, got %d", c.MaxHedges)
	}
	return nil
}

// Option configures a hedge policy built by [New]. Options are made by the
// With functions of this package and apply in order: the last one to set a
// field wins. The options that carry a T ([WithAccept], [WithConfig]) must
// be given to a New of the same T; New panics otherwise, naming both types.
type Option interface {
	// name describes the option in New's panic message.
	name() string
}

type maxHedgesOption int

func (maxHedgesOption) name() string { return "WithMaxHedges" }

type clockOption struct{ c clock.Clock }

func (clockOption) name() string { return "WithClock" }

type acceptOption[T any] func(v T, err error) bool

func (acceptOption[T]) name() string { return "WithAccept[" + reflect.TypeFor[T]().String() + "]" }

type configOption[T any] Config[T]

func (configOption[T]) name() string { return "WithConfig[" + reflect.TypeFor[T]().String() + "]" }

// WithMaxHedges sets [Config.MaxHedges]: the most attempts started after the
// first one.
func WithMaxHedges(n int) Option { return maxHedgesOption(n) }

// WithClock sets [Config.Clock]: the source of time (nil = clock.Real()).
func WithClock(c clock.Clock) Option { return clockOption{c} }

// WithAccept sets [Config.Accept]: which results end the race (nil = those
// without error). T is inferred from accept and must be the policy's T.
func WithAccept[T any](accept func(v T, err error) bool) Option { return acceptOption[T](accept) }

// WithConfig sets every field of the configuration to c's, Delay included.
// T is inferred from c and must be the policy's T.
func WithConfig[T any](c Config[T]) Option { return configOption[T](c) }

// configure returns the configuration of New[T](delay, opts...), or panics
// if an option is for another result type.
func configure[T any](delay time.Duration, opts []Option) Config[T] {
	c := Config[T]{Delay: delay, MaxHedges: 1}
	for _, o := range opts {
		switch o := o.(type) {
		case nil:
			panic("hedge: New option must not be nil")
		case maxHedgesOption:
			c.MaxHedges = int(o)
		case clockOption:
			c.Clock = o.c
		case acceptOption[T]:
			c.Accept = o
		case configOption[T]:
			c = Config[T](o)
		default:
			panic(fmt.Sprintf("hedge: option %s given to New[%v]: its result type must be the policy's", o.name(), reflect.TypeFor[T]()))
		}
	}
	return c
}
