package breaker

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/guardopt"
	"github.com/f0b5b96b/resilience/internal/jsonconf"
	"github.com/f0b5b96b/resilience/internal/merge"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Config is the whole configuration of a [Breaker], one field per option.
// A zero field means the field's default, stated at the field, so the
// zero Config is a working breaker: it trips after 5 consecutive failures,
// stays open for 30 seconds, then admits one trial call and closes when it
// succeeds.
//
// Build a breaker with options (New(WithThreshold(3), ...)), or fill a
// Config, for example from a JSON file (Config reads and writes JSON, see
// [Config.MarshalJSON]), check it with [Config.Validate] and pass it with
// [WithConfig], which sets its non-zero fields.
//
// Only Threshold takes [resilience.Off]: it is the one setting whose
// default is on and that can be switched off. Every other field rejects
// negative values.
type Config struct {
	// Name identifies the breaker in its errors, its policy layer
	// ("breaker(payments)") and its transitions. "" (the default): no name.
	Name string

	// Trip rules. The closed breaker opens when any rule that is on holds
	// after a failure or a slow call: the rules are checked only when a
	// failure or a slow call (successful or not) is counted, never when a
	// fast success is. The consecutive-failures rule (Threshold) is on by
	// default, with a threshold of 5, unless another rule is set.

	// Threshold is the number of consecutive failures that trips the
	// breaker, however far apart in time they come, at most 4294967295
	// (2³²-1). 0 means the default: 5 when no other trip rule is set
	// (FailureRatio, SlowCallRatio and TripIf are zero), else no
	// consecutive-failures rule, only the rules that are set. Off
	// ([resilience.Off], -1) switches the rule off; with no other rule, the
	// breaker then never trips by itself (only [Breaker.ForceOpen] opens it).
	Threshold int
	// FailureRatio trips the breaker when Failures/Calls over the window
	// reaches it, once the window holds at least MinCalls calls. In [0, 1];
	// 0 (the default) means no failure-ratio rule. The ratio is checked
	// only when a failure or a slow call is counted, not on a (fast)
	// success: a ratio reached otherwise — a success that brings the window
	// to MinCalls, successes aging out of a time-based window — trips the
	// breaker at the next failure or slow call, not before.
	FailureRatio float64
	// SlowCallRatio trips the breaker when Slow/Calls over the window
	// reaches it, once the window holds at least MinCalls calls. In [0, 1];
	// 0 (the default) means no slow-call-ratio rule. It needs SlowCall.
	// Like FailureRatio, it is checked only when a failure or a slow call
	// is counted, not on a fast success: a ratio reached otherwise trips
	// the breaker at the next failure or slow call.
	SlowCallRatio float64
	// SlowCall is the duration above which a call is slow, whether it
	// succeeded or failed; >= 0. 0 (the default) means no call is slow.
	// When it is set, a slow half-open trial opens the breaker again, and
	// every admitted call reads the clock twice.
	SlowCall time.Duration
	// TripIf is a custom trip rule, called with the counts after each
	// failure or slow call while closed (from the goroutine that reported
	// it, with the breaker locked: it must be fast and must not call the
	// breaker). nil (the default) means no custom rule.
	TripIf func(Counts) bool

	// The sliding window of the ratio rules (and of Counts while closed):
	// either the last WindowCalls calls (count-based), or the calls of the
	// last WindowDuration (time-based), not both: a Config that sets both
	// is invalid, and across sources (options, WithConfig) the later one
	// to set either wins (see [WithConfig]). With neither, a ratio rule
	// uses the last 100 calls; with no ratio rule and neither, Counts (the
	// ones TripIf sees too) are since the breaker closed.

	// WindowCalls is the size of a count-based window, in calls; >= 0.
	// 0 means the default: the last 100 calls when a ratio rule
	// (FailureRatio or SlowCallRatio) is set and WindowDuration is not,
	// else no count-based window.
	WindowCalls int
	// WindowDuration is the length of a time-based window; >= 0. 0 (the
	// default) means no time-based window: see WindowCalls.
	//
	// The window is kept in WindowBuckets buckets of
	// WindowDuration/WindowBuckets each and holds the current bucket and
	// the WindowBuckets-1 before it, so a call leaves it between
	// (WindowBuckets-1)/WindowBuckets·WindowDuration and WindowDuration
	// after it finished. Memory is O(WindowBuckets) per shard. With a
	// time-based window every call reads the clock when it finishes, and a
	// success is counted in its bucket under a lock of the caller's shard
	// (not the breaker's lock). It must give each bucket at least 1ns.
	WindowDuration time.Duration
	// WindowBuckets is the number of buckets of a time-based window, in
	// [0, 1000]; 0 means 10. It needs WindowDuration.
	WindowBuckets int
	// MinCalls is the number of calls the window must hold before a ratio
	// rule applies; >= 0, and at most WindowCalls when that is set. 0 means
	// 10, or WindowCalls if that is smaller (with the default window of 100
	// calls: 10).
	MinCalls int

	// Cooldown is how long the breaker stays open before it turns
	// half-open; >= 0. 0 means 30s.
	Cooldown time.Duration
	// CooldownBackoff, when not the zero Schedule, replaces Cooldown with a
	// growing cooldown: the k-th opening in a row (the trip, then each
	// failed, slow or expired half-open trial) stays open for the
	// schedule's k-th delay, jitter included. It starts over when the
	// breaker closes or is reset or forced. The breaker draws delays with
	// its lock held, so a schedule with its own random source (WithRand)
	// must not be shared.
	//
	// The zero Schedule (not set, the default) means no backoff: the fixed
	// Cooldown. Any other schedule must have a Max > 0 (Validate rejects,
	// for example, backoff.Constant(0), a cooldown of 0), and is exclusive
	// with Cooldown: a Config that sets both is invalid, and across sources
	// (options, WithConfig) the later one to set either wins (see
	// [WithConfig]).
	CooldownBackoff backoff.Schedule
	// TrialTimeout is how long a half-open trial may go without reporting,
	// measured from the trial's admission; >= 0. A trial that has not
	// reported TrialTimeout after it was admitted expires: like a failed
	// trial, it opens the breaker again (so an abandoned permit wedges
	// nothing for good). Its report, if it ever comes, is ignored.
	//
	// 0 (the default) means the longest cooldown there can be: Cooldown
	// (30s by default), or with a CooldownBackoff the schedule's Max, so
	// that a short or jittered cooldown (full jitter, or a first step of 0)
	// never makes a trial's time short.
	//
	// A dependency slower than TrialTimeout can never close the breaker:
	// each trial expires before it reports. Set TrialTimeout above the
	// slowest call you expect.
	TrialTimeout time.Duration

	// MaxTrials is the number of trial calls a half-open breaker admits at
	// once; >= 0. 0 means 1.
	MaxTrials int
	// SuccessThreshold is the number of successful trials, in a row, that
	// closes a half-open breaker; >= 0. 0 means 1.
	SuccessThreshold int

	// Classify decides what an error says about the dependency: [Success],
	// [Failure] or [Ignored]. It is called only for non-nil errors, and sees
	// them as returned (wrapped or not). It is called by the goroutine
	// that reports each call, outside the breaker's lock, so from many
	// goroutines at once: it must be safe for concurrent use. nil means
	// [DefaultClassify]. A panic in the op is always a failure. A Classify
	// that returns any other Outcome value makes the report panic (see
	// [Permit.Done]).
	Classify func(err error) Outcome
	// OnStateChange, if not nil, is called after each transition, outside
	// the breaker's lock, with transitions delivered one at a time in the
	// order they happened (by whichever goroutine is delivering, possibly
	// not the one that caused the transition). It may call any method of
	// the breaker. nil (the default) means no callback.
	//
	// If it panics, the panic goes up to the caller of the breaker method
	// that was delivering (Allow, a report, Policy's Do, State, ...: the
	// call that caused the transition, or a later one), once the breaker's
	// state is consistent: the transition and the call's own outcome have
	// taken effect and the lock is released. Delivery is not wedged: the
	// transitions queued after the one whose callback panicked are
	// delivered by the next call into the breaker, then later ones as
	// usual.
	OnStateChange func(Transition)
	// Observer, if not nil, receives the breaker's events (see package
	// telemetry for the table): each transition (breaker.opened,
	// breaker.half_opened, breaker.closed, alongside OnStateChange, and
	// delivered the same way, after it), each refusal (breaker.refused),
	// each failure counted (breaker.failure) and each outcome ignored
	// (breaker.ignored). Successes are counted, not reported: a call that
	// succeeds emits no event (see [Breaker.Stats]). Transitions and
	// counted failures are delivered in order, one at a time, outside the
	// breaker's lock; refusals and ignored outcomes are reported by the
	// calling goroutine. A refusal costs one call of Observe, which
	// allocates nothing. nil (the default) means no events, at no cost.
	Observer telemetry.Observer
	// Clock is the time source. nil (the default) means clock.Real().
	Clock clock.Clock

	// MaxKeys is the most keys a [Keyed] tracks at once, >= 0; 0 means
	// 8192. Beyond it a Keyed forgets a key to make room (see [Keyed] for
	// which). A Keyed is always bounded: MaxKeys takes no Off. A Breaker
	// from New ignores it.
	MaxKeys int
}

// Validate reports whether c is a valid configuration: nil if it is, or an
// error naming the first invalid field and its value, for example
// "breaker: Threshold must be in [0, 4294967295] or Off (-1), got -3" or
// "breaker: TrialTimeout must be >= 0, got -1s". [New] panics with the
// same message.
func (c Config) Validate() error {
	switch {
	case c.Threshold != resilience.Off && (c.Threshold < 0 || uint64(c.Threshold) > math.MaxUint32):
		return fmt.Errorf("breaker: Threshold must be in [0, %d] or Off (-1), got %d", uint32(math.MaxUint32), c.Threshold)
	case !(c.FailureRatio >= 0 && c.FailureRatio <= 1):
		return fmt.Errorf("breaker: FailureRatio must be in [0, 1], got %v", c.FailureRatio)
	case !(c.SlowCallRatio >= 0 && c.SlowCallRatio <= 1):
		return fmt.Errorf("breaker: SlowCallRatio must be in [0, 1], got %v", c.SlowCallRatio)
	case c.SlowCall < 0:
		return negative("SlowCall", c.SlowCall)
	case c.SlowCallRatio > 0 && c.SlowCall == 0:
		return errors.New("breaker: SlowCall must be > 0 when SlowCallRatio is set, got 0s")
	case c.WindowCalls < 0:
		return negative("WindowCalls", c.WindowCalls)
	case c.WindowDuration < 0:
		return negative("WindowDuration", c.WindowDuration)
	case c.WindowCalls > 0 && c.WindowDuration > 0:
		return fmt.Errorf("breaker: WindowCalls and WindowDuration are exclusive, got %d and %v", c.WindowCalls, c.WindowDuration)
	case c.WindowBuckets < 0 || c.WindowBuckets > 1000:
		return fmt.Errorf("breaker: WindowBuckets must be in [0, 1000], got %d", c.WindowBuckets)
	case c.WindowBuckets > 0 && c.WindowDuration == 0:
		return fmt.Errorf("breaker: WindowBuckets needs WindowDuration, got %d buckets and 0s", c.WindowBuckets)
	case c.WindowDuration > 0 && c.WindowDuration < time.Duration(c.buckets()):
		buckets := fmt.Sprint(c.WindowBuckets)
		if c.WindowBuckets == 0 {
			buckets = "0: the default 10"
		}
		return fmt.Errorf("breaker: WindowDuration must be at least 1ns per bucket (WindowBuckets %s), got %v", buckets, c.WindowDuration)
	case c.MinCalls < 0:
		return negative("MinCalls", c.MinCalls)
	case c.WindowCalls > 0 && c.MinCalls > c.WindowCalls:
		return fmt.Errorf("breaker: MinCalls must be <= WindowCalls (%d), got %d", c.WindowCalls, c.MinCalls)
	case c.Cooldown < 0:
		return negative("Cooldown", c.Cooldown)
	case !c.CooldownBackoff.IsZero() && c.Cooldown > 0:
		return fmt.Errorf("breaker: Cooldown and CooldownBackoff are exclusive, got %v and %v", c.Cooldown, c.CooldownBackoff)
	case !c.CooldownBackoff.IsZero() && c.CooldownBackoff.Max() <= 0:
		return fmt.Errorf("breaker: CooldownBackoff must have a Max > 0, got %v", c.CooldownBackoff)
	case c.TrialTimeout < 0:
		return negative("TrialTimeout", c.TrialTimeout)
	case c.MaxTrials < 0:
		return negative("MaxTrials", c.MaxTrials)
	case c.SuccessThreshold < 0:
		return negative("SuccessThreshold", c.SuccessThreshold)
	case c.MaxKeys < 0:
		return negative("MaxKeys", c.MaxKeys)
	}
	return nil
}

// negative returns the error of a field that must be >= 0 and is v < 0.
// Off (-1) gets a hint: only Threshold takes it.
// A duration prints as JSON spells it ("off" for Off).
func negative[T int | time.Duration](field string, v T) error {
	got := fmt.Sprint(v)
	if d, ok := any(v).(time.Duration); ok {
		got = jsonconf.Duration(d)
	}
	if v == resilience.Off {
		return fmt.Errorf("breaker: %s must be >= 0 (Off applies only to Threshold), got %s", field, got)
	}
	return fmt.Errorf("breaker: %s must be >= 0, got %s", field, got)
}

// buckets returns the number of buckets of a time-based window.
func (c Config) buckets() int {
	if c.WindowBuckets == 0 {
		return 10
	}
	return c.WindowBuckets
}

// Option configures a [Breaker]. Options apply in order; a later option
// overrides an earlier one that sets the same field.
type Option interface {
	// apply sets fields of the configuration.
	apply(*Config)
}

type option func(*Config)

func (f option) apply(c *Config) { f(c) }

// WithConfig sets the fields of the configuration that are not zero in c
// to c's; c's zero fields (which mean "the default") leave what New's
// earlier options set, or the default, as it is. Options after it
// override single fields. Given WithCooldown(time.Second) and then
// WithConfig(Config{Threshold: 3}), the breaker trips after 3 failures and
// stays open 1s.
//
// A non-zero field of an exclusive pair (Cooldown and CooldownBackoff,
// WindowCalls and WindowDuration) clears the other field of the pair, when
// c leaves it zero, so the later source wins: given WithCooldown(time.Second)
// and then WithConfig(Config{CooldownBackoff: s}), the cooldown is s. A
// Config that sets both fields of a pair is invalid.
func WithConfig(c Config) Option {
	return option(func(d *Config) {
		merge.NonZero(d, c)
		clearRivals(d, c)
	})
}

// clearRivals applies the rule of exclusive fields: for each pair whose
// one field set sets (non-zero) and set leaves the other zero, it clears
// that other field of d, so that the later source wins. Setting
// WindowCalls also clears WindowBuckets, part of the time-based window.
// A zero field of set clears nothing.
func clearRivals(d *Config, set Config) {
	if set.Cooldown != 0 && set.CooldownBackoff.IsZero() {
		d.CooldownBackoff = backoff.Schedule{}
	}
	if !set.CooldownBackoff.IsZero() && set.Cooldown == 0 {
		d.Cooldown = 0
	}
	if set.WindowCalls != 0 && set.WindowDuration == 0 {
		d.WindowDuration = 0
		if set.WindowBuckets == 0 {
			d.WindowBuckets = 0
		}
	}
	if set.WindowDuration != 0 && set.WindowCalls == 0 {
		d.WindowCalls = 0
	}
}

// inRange panics, naming the option and its value, when an option is
// given a value outside its range (ok is false); why states the range. An
// option's range leaves out 0: in a Config a zero field means its default,
// but an option given 0 states a value, which 0 is not. Rules between
// fields are left to Validate, in New.
func inRange[T int | float64 | time.Duration | string](option string, ok bool, value T, why string) {
	if !ok {
		panic("breaker: " + option + "(" + fmt.Sprint(value) + "): " + why)
	}
}

// WithName sets Config.Name.
// It panics if name is not valid UTF-8 (see telemetry.CheckName).
func WithName(name string) Option {
	guardopt.Name("breaker", name)
	return option(func(c *Config) { c.Name = name })
}

// WithThreshold sets Config.Threshold: n consecutive failures trip the
// breaker; [resilience.Off] switches the rule off. Without it, the default
// (5 when no other trip rule is set, else no consecutive-failures rule).
// It panics if n is neither in [1, 4294967295] nor Off.
func WithThreshold(n int) Option {
	inRange("WithThreshold", n == resilience.Off || n >= 1 && uint64(n) <= math.MaxUint32, n, "the threshold must be in [1, 4294967295], or resilience.Off for no consecutive-failures rule; leave the option out for the default")
	return option(func(c *Config) { c.Threshold = n })
}

// WithFailureRatio sets Config.FailureRatio. It panics if r is not in
// (0, 1].
func WithFailureRatio(r float64) Option {
	inRange("WithFailureRatio", r > 0 && r <= 1, r, "the ratio must be in (0, 1]; leave the option out for no failure-ratio rule")
	return option(func(c *Config) { c.FailureRatio = r })
}

// WithSlowCallRatio sets Config.SlowCallRatio. It panics if r is not in
// (0, 1].
func WithSlowCallRatio(r float64) Option {
	inRange("WithSlowCallRatio", r > 0 && r <= 1, r, "the ratio must be in (0, 1]; leave the option out for no slow-call-ratio rule")
	return option(func(c *Config) { c.SlowCallRatio = r })
}

// WithSlowCall sets Config.SlowCall: the duration above which a call is
// slow. It panics if d <= 0.
func WithSlowCall(d time.Duration) Option {
	inRange("WithSlowCall", d > 0, d, "the duration must be > 0; leave the option out for no slow calls")
	return option(func(c *Config) { c.SlowCall = d })
}

// WithTripIf sets Config.TripIf: a custom trip rule.
func WithTripIf(f func(Counts) bool) Option { return option(func(c *Config) { c.TripIf = f }) }

// WithWindowCalls sets Config.WindowCalls: a count-based window of n
// calls. n != 0 clears WindowDuration and WindowBuckets (the pair is
// exclusive: the later setting wins). It panics if n < 1.
func WithWindowCalls(n int) Option {
	inRange("WithWindowCalls", n >= 1, n, "the window must be >= 1 call; leave the option out for the default")
	return option(func(c *Config) { c.WindowCalls = n; clearRivals(c, Config{WindowCalls: n}) })
}

// WithWindowDuration sets Config.WindowDuration: a time-based window. d != 0
// clears WindowCalls (the pair is exclusive: the later setting wins). It
// panics if d <= 0.
func WithWindowDuration(d time.Duration) Option {
	inRange("WithWindowDuration", d > 0, d, "the window must be > 0; leave the option out for no time-based window")
	return option(func(c *Config) { c.WindowDuration = d; clearRivals(c, Config{WindowDuration: d}) })
}

// WithWindowBuckets sets Config.WindowBuckets: the buckets of a time-based
// window. It panics if n is not in [1, 1000].
func WithWindowBuckets(n int) Option {
	inRange("WithWindowBuckets", n >= 1 && n <= 1000, n, "the buckets must be in [1, 1000]; leave the option out for the default, 10")
	return option(func(c *Config) { c.WindowBuckets = n })
}

// WithMinCalls sets Config.MinCalls: calls in the window before a ratio
// rule applies. It panics if n < 1.
func WithMinCalls(n int) Option {
	inRange("WithMinCalls", n >= 1, n, "the minimum must be >= 1 call; leave the option out for the default")
	return option(func(c *Config) { c.MinCalls = n })
}

// WithCooldown sets Config.Cooldown: how long the breaker stays open.
// d != 0 clears CooldownBackoff (the pair is exclusive: the later setting
// wins). It panics if d <= 0.
func WithCooldown(d time.Duration) Option {
	inRange("WithCooldown", d > 0, d, "the cooldown must be > 0; leave the option out for the default, 30s")
	return option(func(c *Config) { c.Cooldown = d; clearRivals(c, Config{Cooldown: d}) })
}

// WithCooldownBackoff sets Config.CooldownBackoff: a growing cooldown. The
// zero Schedule (not set) means the fixed Cooldown; any other clears
// Cooldown (the pair is exclusive: the later setting wins).
func WithCooldownBackoff(s backoff.Schedule) Option {
	inRange("WithCooldownBackoff", !s.IsZero(), "backoff.Schedule{}", "the zero Schedule is not set; leave the option out for the fixed Cooldown")
	return option(func(c *Config) { c.CooldownBackoff = s; clearRivals(c, Config{CooldownBackoff: s}) })
}

// WithTrialTimeout sets Config.TrialTimeout: how long a half-open trial
// may go without reporting before it expires; 0 means the longest cooldown
// (Cooldown, or CooldownBackoff's Max). A dependency slower than d can
// never close the breaker. It panics if d <= 0.
func WithTrialTimeout(d time.Duration) Option {
	inRange("WithTrialTimeout", d > 0, d, "the timeout must be > 0; leave the option out for the default, the longest cooldown")
	return option(func(c *Config) { c.TrialTimeout = d })
}

// WithMaxTrials sets Config.MaxTrials: concurrent trial calls in
// half-open. It panics if n < 1.
func WithMaxTrials(n int) Option {
	inRange("WithMaxTrials", n >= 1, n, "the trials must be >= 1; leave the option out for the default, 1")
	return option(func(c *Config) { c.MaxTrials = n })
}

// WithSuccessThreshold sets Config.SuccessThreshold: successful trials
// that close. It panics if n < 1.
func WithSuccessThreshold(n int) Option {
	inRange("WithSuccessThreshold", n >= 1, n, "the threshold must be >= 1; leave the option out for the default, 1")
	return option(func(c *Config) { c.SuccessThreshold = n })
}

// WithClassify sets Config.Classify: what an error says about the dependency.
func WithClassify(f func(err error) Outcome) Option {
	return option(func(c *Config) { c.Classify = f })
}

// WithOnStateChange sets Config.OnStateChange: a callback for each transition.
func WithOnStateChange(f func(Transition)) Option {
	return option(func(c *Config) { c.OnStateChange = f })
}

// WithObserver sets Config.Observer: where the breaker's events go (nil:
// nowhere).
func WithObserver(o telemetry.Observer) Option {
	return option(func(c *Config) { c.Observer = o })
}

// WithClock sets Config.Clock: the time source.
// It panics if c is nil: leave the option out for clock.Real().
func WithClock(c clock.Clock) Option {
	guardopt.Clock("breaker", c)
	return option(func(d *Config) { d.Clock = c })
}
