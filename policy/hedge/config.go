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

// Option configures a hedge policy for results of type T, built by [New].
// Options are made by the With functions of this package and apply in
// order: the last one to set a field wins.
//
// The options that carry a T ([WithAccept], [WithConfig]) are an
// Option[T] of their own T only: giving one to a New of another T does not
// compile. The others ([WithMaxHedges], [WithClock]) are an [AnyOption],
// which is an Option[T] for every T.
type Option[T any] func(*settings)

// AnyOption is an option that carries no result type: a value of it is an
// [Option][T] for every T, so it goes to a New of any T without a type
// argument.
type AnyOption = func(*settings)

// settings is what the options set: a Config without its result type.
type settings struct {
	delay     time.Duration
	maxHedges int
	accept    any // a func(T, error) bool for the policy's T, or nil
	clock     clock.Clock
}

// WithMaxHedges sets [Config.MaxHedges]: the most attempts started after the
// first one.
func WithMaxHedges(n int) AnyOption { return func(s *settings) { s.maxHedges = n } }

// WithClock sets [Config.Clock]: the source of time (nil = clock.Real()).
func WithClock(c clock.Clock) AnyOption { return func(s *settings) { s.clock = c } }

// WithAccept sets [Config.Accept]: which results end the race (nil = those
// without error). T is inferred from accept; the option goes to a New of
// that T only.
func WithAccept[T any](accept func(v T, err error) bool) Option[T] {
	return func(s *settings) { s.accept = accept }
}

// WithConfig sets every field of the configuration to c's, Delay included.
// T is inferred from c; the option goes to a New of that T only.
func WithConfig[T any](c Config[T]) Option[T] {
	return func(s *settings) {
		*s = settings{delay: c.Delay, maxHedges: c.MaxHedges, accept: c.Accept, clock: c.Clock}
	}
}

// configure returns the configuration of New[T](delay, opts...). It panics
// if an option is nil, or if one was converted from an Option of another
// result type.
func configure[T any](delay time.Duration, opts []Option[T]) Config[T] {
	s := settings{delay: delay, maxHedges: 1}
	for _, o := range opts {
		if o == nil {
			panic("hedge: New option must not be nil")
		}
		o(&s)
	}
	c := Config[T]{Delay: s.delay, MaxHedges: s.maxHedges, Clock: s.clock}
	if s.accept != nil {
		accept, ok := s.accept.(func(T, error) bool)
		if !ok {
			panic(fmt.Sprintf("hedge: Accept of type %v given to New[%v]: an Option converted to another result type", reflect.TypeOf(s.accept), reflect.TypeFor[T]()))
		}
		c.Accept = accept
	}
	return c
}
