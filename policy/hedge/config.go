package hedge

import (
	"fmt"
	"reflect"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/jsonconf"
	"github.com/f0b5b96b/resilience/internal/merge"
)

// Config is the configuration of a hedge policy for results of type T,
// one field per option, for configurations read at run time (a JSON file,
// say: Config reads and writes JSON with durations as Go duration strings
// such as "50ms"; Accept and Clock are not serialised). A zero field means
// the field's default, so Config[T]{} is the default configuration, and
// [WithConfig] sets only the fields that are not zero. Check a Config with
// [Config.Validate] before giving it to New.
type Config[T any] struct {
	// Delay is how long to wait for an accepted result before starting the
	// next attempt (a hedge), measured on Clock from the start of the
	// attempt before. 0 means the delay given to [New]; else it must be
	// > 0, and it replaces New's.
	Delay time.Duration

	// MaxHedges is the most attempts started in addition to the first: a
	// call makes at most 1+MaxHedges attempts. 0 means 1; else it must be
	// >= 1 (math.MaxInt is fine: no call ever holds a record per possible
	// attempt).
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

	// Clock is the source of time for the delay. nil means clock.Real().
	Clock clock.Clock
}

// Validate reports whether c is a valid configuration: nil if it is, else
// an error naming the first field at fault and its value, the same message
// [New] panics with. Zero fields are valid: each means its default.
func (c Config[T]) Validate() error {
	switch {
	case c.Delay < 0:
		return fmt.Errorf("hedge: Delay must be > 0, or 0 for New's delay, got %s", jsonconf.Duration(c.Delay))
	case c.MaxHedges < 0:
		return fmt.Errorf("hedge: MaxHedges must be >= 1, or 0 for the default 1, got %d", c.MaxHedges)
	case c.MaxWait < 0 && c.MaxWait != resilience.Off:
		return fmt.Errorf("hedge: MaxWait must be > 0, 0 for the Delay or Off (-1) for no cap, got %v", c.MaxWait)
	}
	return nil
}

// MarshalJSON writes c as a JSON object: its non-zero fields by their Go
// names, Delay and MaxWait as Go duration strings ("50ms"; "off" for Off);
// Accept and Clock are left out.
func (c Config[T]) MarshalJSON() ([]byte, error) { return jsonconf.Marshal(c) }

// UnmarshalJSON reads a JSON object that [Config.MarshalJSON] wrote (field
// names match case-insensitively) into c: the fields it holds are set, the
// others left as they are. An unknown field, or one that cannot be
// serialised (Accept, Clock), is an error.
func (c *Config[T]) UnmarshalJSON(b []byte) error {
	return jsonconf.Unmarshal("hedge", b, c)
}

// Option configures a hedge policy for results of type T, built by [New].
// Options are made by the With functions of this package and apply in
// order: the last one to set a field wins.
//
// The options that carry a T ([WithAccept], [WithConfig]) are an
// Option[T] of their own T only: giving one to a New of another T does not
// compile. The others ([WithMaxHedges], [WithMaxWait], [WithClock]) are an [AnyOption],
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
	maxWait   time.Duration
	accept    any // a func(T, error) bool for the policy's T, or nil
	clock     clock.Clock
}

// WithMaxHedges sets [Config.MaxHedges]: the most attempts started after the
// first one (0 = the default, 1).
func WithMaxHedges(n int) AnyOption { return func(s *settings) { s.maxHedges = n } }

// WithMaxWait sets [Config.MaxWait]: the longest Retry-After hint that
// the next attempt waits for; a longer one starts no more attempts (0 = the
// default, the Delay; resilience.Off = no cap).
func WithMaxWait(d time.Duration) AnyOption { return func(s *settings) { s.maxWait = d } }

// WithClock sets [Config.Clock]: the source of time (nil = clock.Real()).
func WithClock(c clock.Clock) AnyOption { return func(s *settings) { s.clock = c } }

// WithAccept sets [Config.Accept]: which results end the race (nil = those
// without error). T is inferred from accept; the option goes to a New of
// that T only.
func WithAccept[T any](accept func(v T, err error) bool) Option[T] {
	return func(s *settings) { s.accept = accept }
}

// WithConfig sets the fields of c that are not zero, and leaves the others
// as New's arguments, the defaults and the options before it set them: New
// keeps its delay unless c.Delay is set. T is inferred from c; the option
// goes to a New of that T only.
func WithConfig[T any](c Config[T]) Option[T] {
	return func(s *settings) {
		cur := configOf[T](s)
		merge.NonZero(&cur, c)
		accept := s.accept
		if cur.Accept != nil {
			accept = cur.Accept
		}
		*s = settings{delay: cur.Delay, maxHedges: cur.MaxHedges, maxWait: cur.MaxWait, accept: accept, clock: cur.Clock}
	}
}

// configOf returns the configuration that s holds, for results of type T;
// its Accept is nil if s holds none for T.
func configOf[T any](s *settings) Config[T] {
	accept, _ := s.accept.(func(T, error) bool)
	return Config[T]{Delay: s.delay, MaxHedges: s.maxHedges, MaxWait: s.maxWait, Accept: accept, Clock: s.clock}
}

// configure returns the configuration of New[T](delay, opts...), or panics
// with the message New panics with.
func configure[T any](delay time.Duration, opts []Option[T]) Config[T] {
	s := settings{delay: delay}
	for _, o := range opts {
		if o == nil {
			panic("hedge: New option must not be nil")
		}
		o(&s)
	}
	if _, ok := s.accept.(func(T, error) bool); s.accept != nil && !ok {
		panic(fmt.Sprintf("hedge: Accept of type %v given to New[%v]: an Option converted to another result type", reflect.TypeOf(s.accept), reflect.TypeFor[T]()))
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
