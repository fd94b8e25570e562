package resilienceredis

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/jsonconf"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/merge"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Defaults of the fields whose zero means something else.
const (
	defaultPrefix        = "resilience:"
	defaultTimeout       = 50 * time.Millisecond
	defaultProbe         = time.Second
	defaultThreshold     = 5
	defaultWindow        = 10 * time.Second
	defaultBuckets       = 10
	defaultMinCalls      = 10
	defaultCooldown      = 30 * time.Second
	defaultFlushInterval = 50 * time.Millisecond
	defaultMaxBatch      = 100

	maxRate          = 1e6 // one event per microsecond, the server clock's resolution
	maxBurst         = 1 << 40
	maxBuckets       = 100
	maxFlushInterval = time.Second
	off              = -1 // resilience.Off

	// maxFillUs bounds a limiter's interval T = 1e6/Rate µs and the time
	// its empty bucket takes to fill, Burst·T µs: the scripts take a
	// stored value more than 2^52µs (about 142 years) ahead for one they
	// cannot have written, and past it the expiries they set leave the
	// range Redis accepts. The lowest Rate is so 1e6/2^52.
	maxFillUs = 1 << 52
)

// LimiterConfig is the whole configuration of a [Limiter] or a
// [KeyedLimiter], for configurations read at run time: fill it, check it
// with [LimiterConfig.Validate], and pass it with [WithLimiterConfig]. A
// zero field means the default its doc states; LimiterConfig{} with New's
// arguments is the default limiter.
type LimiterConfig struct {
	// Name is the limiter's shared identity: every instance built with the
	// same Name, Prefix, Rate and Burst on the same Redis shares one
	// bucket (one per key for a KeyedLimiter); instances of the same Name
	// and Prefix with another Rate or Burst have a bucket of their own,
	// and are reported (ErrSettingsConflict). It names the limiter in
	// errors and in the policy's layer, "ratelimit(Name)". It must not be
	// empty nor hold '{' or '}'. The zero value means as given to
	// [NewLimiter] or [NewKeyedLimiter]; a non-zero Name (through
	// [WithLimiterConfig]) must equal the name given, else the constructor
	// panics.
	Name string

	// Rate is how many events per second the bucket refills, fleet-wide:
	// at least 1e6/2^52 ≈ 2.220446049250313e-10 (an interval 1/Rate of at
	// most 2^52µs, about 142 years: the scripts keep the bucket in
	// microseconds within that span) and at most 1e6 (one per
	// microsecond, the resolution of the server's clock), or +Inf, which
	// admits every event without asking Redis. The zero value means as given to [NewLimiter] or
	// [NewKeyedLimiter]; a non-zero Rate must equal the rate given, else
	// the constructor panics.
	Rate float64

	// Burst is the bucket's capacity: how many events may pass at once,
	// fleet-wide, after a quiet spell; in [1, 1<<40], and Burst/Rate, the
	// time an empty bucket takes to fill, at most 2^52µs (about 142
	// years), so at most Rate×4503599627.370496 (e.g. 4503599627 at Rate
	// 1, 4 at Rate 1e-9). A new bucket is full. The zero value means as given to [NewLimiter] or
	// [NewKeyedLimiter]; a non-zero Burst must equal the burst given, else
	// the constructor panics.
	Burst int

	// Prefix starts every Redis key of the limiter. It must not hold '{'
	// or '}'. "" (the default) means "resilience:".
	Prefix string

	// MaxWait is the longest [Limiter.Wait] (and [WaitPolicy]) waits for a
	// token. 0 (the default) means no limit other than the context's
	// deadline.
	MaxWait time.Duration

	// Timeout bounds each Redis round trip of a decision: a decision that
	// Redis has not answered within it is made by the fallback instead,
	// and the call goes on. 0 means 50ms.
	Timeout time.Duration

	// ProbeInterval is how long the limiter decides locally after Redis
	// failed or was slow, before one decision tries Redis again. 0 means
	// 1s.
	ProbeInterval time.Duration

	// FallbackRate and FallbackBurst are the limit of each instance while
	// Redis is unreachable, kept in the instance's own token bucket (a
	// ratelimit.Limiter, or one per key). 0 means Rate and Burst: each
	// instance alone admits up to the fleet's limit, so the fleet admits up
	// to N times it. +Inf admits every call (fail open); Off for
	// FallbackRate refuses every call (fail closed). FallbackRate is
	// otherwise in (0, 1e9], FallbackBurst in [0, 1<<40].
	FallbackRate  float64
	FallbackBurst int

	// Observer, if not nil, receives the limiter's events: each decision
	// its fallback makes and why (LimiterLocal), and the warnings of its
	// checks (LimiterEvictionUnsafe, LimiterSettingsConflict,
	// LimiterBucketRepaired); a decision Redis makes emits nothing. It is
	// called from the deciding goroutine, or from the goroutine of a check
	// in the background, so it must be safe for simultaneous use. It is
	// not written to JSON. nil (the default) reports nothing.
	Observer telemetry.Observer
}

// Validate reports the first invalid field of c, with the message
// [NewLimiter] or [NewKeyedLimiter] would panic with when given c with
// [WithLimiterConfig], or nil if they would accept it. A zero Name, Rate
// or Burst means the constructor's argument, which the constructor checks
// itself, so Validate checks those fields only when they are set:
// LimiterConfig{Timeout: 20 * time.Millisecond} is valid, and so is a
// whole configuration (read from JSON, say) whose fields are all valid.
// The constructor checks the configuration that its arguments and all its
// options make together, with the same messages.
func (c LimiterConfig) Validate() error { return c.validate(false) }

// validate is Validate; whole (the constructor's configuration, its
// arguments merged in) requires Name, Rate and Burst too.
func (c LimiterConfig) validate(whole bool) error {
	inf := math.IsInf(c.Rate, 1)
	switch {
	case (whole || c.Name != "") && nameProblem(c.Name) != "":
		return fmt.Errorf("resilienceredis: Name must be non-empty, valid UTF-8 and hold no '{' or '}', got %q", c.Name)
	case strings.ContainsAny(c.Prefix, "{}"):
		return fmt.Errorf("resilienceredis: Prefix must hold no '{' or '}', got %q", c.Prefix)
	case (whole || c.Rate != 0) && (math.IsNaN(c.Rate) || c.Rate <= 0 || c.Rate > maxRate && !inf || 1e6/c.Rate > maxFillUs):
		return fmt.Errorf("resilienceredis: Rate must be in [%v, 1e6] events per second (an interval 1/Rate of at most 2^52µs, about 142 years) or +Inf, got %v", 1e6/maxFillUs, c.Rate)
	case !inf && (whole || c.Burst != 0) && (c.Burst < 1 || c.Burst > maxBurst):
		return fmt.Errorf("resilienceredis: Burst must be in [1, 1<<40], got %d", c.Burst)
	case !inf && c.Rate != 0 && 1e6/c.Rate*float64(c.Burst) > maxFillUs:
		// The limiter's Burst·T, as the scripts are given it.
		return fmt.Errorf("resilienceredis: Burst/Rate, the time an empty bucket takes to fill, must be at most 2^52µs (%ss, about 142 years), got Burst %d / Rate %v = %vs",
			strconv.FormatFloat(maxFillUs/1e6, 'f', -1, 64), c.Burst, c.Rate, float64(c.Burst)/c.Rate)
	case c.MaxWait < 0:
		return fmt.Errorf("resilienceredis: MaxWait must be >= 0, got %v", c.MaxWait)
	case c.Timeout < 0:
		return fmt.Errorf("resilienceredis: Timeout must be >= 0 (0 means %v), got %v", defaultTimeout, c.Timeout)
	case c.ProbeInterval < 0:
		return fmt.Errorf("resilienceredis: ProbeInterval must be >= 0 (0 means %v), got %v", defaultProbe, c.ProbeInterval)
	case math.IsNaN(c.FallbackRate) || c.FallbackRate < 0 && c.FallbackRate != off ||
		c.FallbackRate > 1e9 && !math.IsInf(c.FallbackRate, 1):
		return fmt.Errorf("resilienceredis: FallbackRate must be in [0, 1e9], +Inf or Off (-1), got %v", c.FallbackRate)
	case c.FallbackBurst < 0 || c.FallbackBurst > maxBurst:
		return fmt.Errorf("resilienceredis: FallbackBurst must be in [0, 1<<40], got %d", c.FallbackBurst)
	}
	return nil
}

// MarshalJSON writes c as a JSON object: zero fields left out, durations
// as Go duration strings.
func (c LimiterConfig) MarshalJSON() ([]byte, error) { return jsonconf.Marshal(c) }

// UnmarshalJSON reads c from a JSON object as MarshalJSON writes it;
// unknown fields are an error.
func (c *LimiterConfig) UnmarshalJSON(b []byte) error {
	return jsonconf.Unmarshal("resilienceredis", b, c)
}

// BreakerConfig is the whole configuration of a [Breaker], for
// configurations read at run time: fill it, check it with
// [BreakerConfig.Validate], and pass it with [WithBreakerConfig]. A zero
// field means the default its doc states: BreakerConfig{} with New's name
// is a breaker that trips after 5 consecutive failures across the fleet,
// stays open 30s, then lets one trial call through, fleet-wide.
//
// The trip rules are those of policy/breaker, over a window shared by the
// fleet, which is time-based: a count-based window (breaker's
// WindowCalls), TripIf, CooldownBackoff and forced states have no fleet
// form.
type BreakerConfig struct {
	// Name is the breaker's shared identity: instances built with the same
	// Name and Prefix on the same Redis share one state. It names the
	// breaker in errors, in its policy layer ("breaker(Name)") and in its
	// transitions. It must not be empty nor hold '{' or '}'. The zero value
	// means as given to [NewBreaker]; a non-zero Name (through
	// [WithBreakerConfig]) must equal the name given, else NewBreaker
	// panics.
	Name string

	// Prefix starts every Redis key and channel of the breaker. It must
	// not hold '{' or '}'. "" (the default) means "resilience:".
	Prefix string

	// Threshold is the number of consecutive failures across the fleet
	// (in the order the instances' batches reach Redis) that trips the
	// breaker, in [0, 4294967295]. 0 means 5; Off switches the rule off.
	Threshold int
	// FailureRatio trips the breaker when Failures/Calls over the shared
	// window reaches it, once the window holds at least MinCalls calls;
	// checked once per batch, on the window after the batch. In [0, 1]; 0
	// (the default) means off.
	FailureRatio float64
	// SlowCallRatio trips the breaker when Slow/Calls over the shared
	// window reaches it, like FailureRatio. In [0, 1]; 0 (the default)
	// means off. It needs SlowCall.
	SlowCallRatio float64
	// SlowCall is the duration above which a call is slow. 0 (the
	// default) counts no call as slow.
	SlowCall time.Duration
	// WindowDuration is the length of the shared window of the ratio
	// rules, kept in Redis in WindowBuckets buckets by the server's clock.
	// 0 means 10s. It must give each bucket at least 1ms.
	WindowDuration time.Duration
	// WindowBuckets is the number of buckets of the window, in [0, 100];
	// 0 means 10.
	WindowBuckets int
	// MinCalls is the number of calls the window must hold before a ratio
	// rule applies. 0 means 10.
	MinCalls int

	// Cooldown is how long the breaker stays open before it turns
	// half-open, by the server's clock. 0 means 30s.
	Cooldown time.Duration
	// TrialTimeout is how long a half-open trial may go without reporting
	// before it expires, fleet-wide, and opens the breaker again (so a
	// trial whose instance crashed wedges nothing). 0 means Cooldown.
	TrialTimeout time.Duration
	// MaxTrials is the number of trial calls the half-open breaker admits
	// at once across the whole fleet. 0 means 1.
	MaxTrials int
	// SuccessThreshold is the number of successful trials, in a row,
	// fleet-wide, that closes the half-open breaker. 0 means 1.
	SuccessThreshold int

	// Classify decides what an error says about the dependency, as in
	// policy/breaker. nil means breaker.DefaultClassify.
	Classify func(err error) breaker.Outcome
	// OnStateChange, if not nil, is called once for each change of state
	// this instance sees (its own and other instances' transitions, with
	// the shared generation; and, while Redis is unreachable, the local
	// breaker's, with its own generations), one at a time, from a
	// goroutine of the breaker. A
	// transition this instance missed (a pub/sub message lost while Redis
	// was unreachable) shows as one change from the state it knew to the
	// state it learns. The Transition's Counts are zero for changes learnt
	// from Redis, including the fleet's trips: unlike policy/breaker's, they
	// do not hold the counts that tripped the breaker (the fleet's counts
	// stay in Redis; [Breaker.Shared] reads them). At is when this instance
	// learnt of the change. The end of a cooldown is not a call of its
	// own: an open shared state whose cooldown has passed reads half-open
	// in State until the fleet's trial makes its half-open generation, and
	// while Redis is unreachable the end of a cooldown learnt from Redis
	// moves State from open to the local breaker's state without a call.
	// It must not block for long.
	OnStateChange func(breaker.Transition)
	// OnRulesMismatch, if not nil, is called with an error matching
	// ErrRulesMismatch (see [Breaker.RulesMismatch]) when this instance
	// learns that another instance uses the shared state with other rules,
	// and again when those rules change; from the goroutine that calls
	// OnStateChange, one call at a time. It must not block for long.
	OnRulesMismatch func(error)
	// Observer, if not nil, receives the breaker's events: each time the
	// instance starts deciding alone because Redis did not answer
	// (BreakerLocal, with why), and each batch of outcomes that Redis
	// refused because the shared state had moved to another generation
	// (BreakerFenced). It is called from the goroutine that found it out
	// (a caller's, or the breaker's flusher), so it must be safe for
	// simultaneous use and must not block for long. It is not written to
	// JSON. nil (the default) reports nothing.
	Observer telemetry.Observer

	// Timeout bounds every Redis round trip: no call through the breaker
	// waits on Redis longer than it (only calls that would be half-open
	// trials ask Redis at all), and a round trip that takes longer counts
	// as Redis being unreachable. 0 means 50ms.
	Timeout time.Duration
	// FlushInterval is the longest an outcome of a closed-state call waits
	// in the instance's batch before it is sent to Redis, in (0, 1s]. 0
	// means 50ms.
	FlushInterval time.Duration
	// MaxBatch is the number of outcomes after which a batch is sent at
	// once, before FlushInterval has passed. 0 means 100.
	MaxBatch int
	// ProbeInterval is how often an instance that has sent nothing reads
	// the shared state anyway (so a lost pub/sub message is made good
	// within it), and how often, while Redis is unreachable, it tries to
	// reach it again. 0 means 1s.
	ProbeInterval time.Duration
}

// Validate reports the first invalid field of c, with the message
// [NewBreaker] would panic with when given c with [WithBreakerConfig], or
// nil if it would accept it. A zero Name means NewBreaker's argument,
// which NewBreaker checks itself, so Validate checks Name only when it is
// set: BreakerConfig{Threshold: 3} is valid. NewBreaker checks the
// configuration that all its options make together, with the same
// messages.
func (c BreakerConfig) Validate() error { return c.validate(false) }

// validate is Validate; whole (NewBreaker's configuration, its name
// merged in) requires Name too.
func (c BreakerConfig) validate(whole bool) error {
	buckets := c.WindowBuckets
	if buckets == 0 {
		buckets = defaultBuckets
	}
	switch {
	case (whole || c.Name != "") && nameProblem(c.Name) != "":
		return fmt.Errorf("resilienceredis: Name must be non-empty, valid UTF-8 and hold no '{' or '}', got %q", c.Name)
	case strings.ContainsAny(c.Prefix, "{}"):
		return fmt.Errorf("resilienceredis: Prefix must hold no '{' or '}', got %q", c.Prefix)
	case c.Threshold < off || uint64(max(c.Threshold, 0)) > math.MaxUint32:
		return fmt.Errorf("resilienceredis: Threshold must be in [0, %d] or Off (-1), got %d", uint32(math.MaxUint32), c.Threshold)
	case !(c.FailureRatio >= 0 && c.FailureRatio <= 1):
		return fmt.Errorf("resilienceredis: FailureRatio must be in [0, 1], got %v", c.FailureRatio)
	case !(c.SlowCallRatio >= 0 && c.SlowCallRatio <= 1):
		return fmt.Errorf("resilienceredis: SlowCallRatio must be in [0, 1], got %v", c.SlowCallRatio)
	case c.SlowCall < 0:
		return fmt.Errorf("resilienceredis: SlowCall must be >= 0, got %v", c.SlowCall)
	case c.SlowCallRatio > 0 && c.SlowCall == 0:
		return fmt.Errorf("resilienceredis: SlowCall must be > 0 when SlowCallRatio is set, got 0s")
	case c.Threshold == off && c.FailureRatio == 0 && c.SlowCallRatio == 0:
		return fmt.Errorf("resilienceredis: Threshold is Off and no ratio rule is on: the breaker could never trip")
	case c.WindowDuration < 0:
		return fmt.Errorf("resilienceredis: WindowDuration must be >= 0 (0 means %v), got %v", defaultWindow, c.WindowDuration)
	case c.WindowBuckets < 0 || c.WindowBuckets > maxBuckets:
		return fmt.Errorf("resilienceredis: WindowBuckets must be in [0, %d], got %d", maxBuckets, c.WindowBuckets)
	case c.WindowDuration > 0 && c.WindowDuration < time.Duration(buckets)*time.Millisecond:
		return fmt.Errorf("resilienceredis: WindowDuration must be at least 1ms per bucket (%d buckets), got %v", buckets, c.WindowDuration)
	case c.MinCalls < 0:
		return fmt.Errorf("resilienceredis: MinCalls must be >= 0 (0 means %d), got %d", defaultMinCalls, c.MinCalls)
	case c.Cooldown < 0:
		return fmt.Errorf("resilienceredis: Cooldown must be >= 0 (0 means %v), got %v", defaultCooldown, c.Cooldown)
	case c.TrialTimeout < 0:
		return fmt.Errorf("resilienceredis: TrialTimeout must be >= 0 (0 means Cooldown), got %v", c.TrialTimeout)
	case c.MaxTrials < 0:
		return fmt.Errorf("resilienceredis: MaxTrials must be >= 0 (0 means 1), got %d", c.MaxTrials)
	case c.SuccessThreshold < 0:
		return fmt.Errorf("resilienceredis: SuccessThreshold must be >= 0 (0 means 1), got %d", c.SuccessThreshold)
	case c.Timeout < 0:
		return fmt.Errorf("resilienceredis: Timeout must be >= 0 (0 means %v), got %v", defaultTimeout, c.Timeout)
	case c.FlushInterval < 0 || c.FlushInterval > maxFlushInterval:
		return fmt.Errorf("resilienceredis: FlushInterval must be in [0, 1s] (0 means %v), got %v", defaultFlushInterval, c.FlushInterval)
	case c.MaxBatch < 0:
		return fmt.Errorf("resilienceredis: MaxBatch must be >= 0 (0 means %d), got %d", defaultMaxBatch, c.MaxBatch)
	case c.ProbeInterval < 0:
		return fmt.Errorf("resilienceredis: ProbeInterval must be >= 0 (0 means %v), got %v", defaultProbe, c.ProbeInterval)
	}
	return nil
}

// MarshalJSON writes c as a JSON object: zero fields left out, durations
// as Go duration strings ("off" for Off), functions skipped.
func (c BreakerConfig) MarshalJSON() ([]byte, error) { return jsonconf.Marshal(c) }

// UnmarshalJSON reads c from a JSON object as MarshalJSON writes it;
// unknown fields are an error.
func (c *BreakerConfig) UnmarshalJSON(b []byte) error {
	return jsonconf.Unmarshal("resilienceredis", b, c)
}

// LimiterOption configures a [Limiter] in [NewLimiter] or a
// [KeyedLimiter] in [NewKeyedLimiter]. Options apply in order; when two
// set the same field, the last one wins.
type LimiterOption interface{ applyLimiter(*LimiterConfig) }

// BreakerOption configures a [Breaker] in [NewBreaker]. Options apply in
// order; when two set the same field, the last one wins.
type BreakerOption interface{ applyBreaker(*BreakerConfig) }

// RetryBudgetOption configures a [RetryBudget] in [NewRetryBudget].
// Options apply in order; when two set the same field, the last one wins.
type RetryBudgetOption interface {
	applyRetryBudget(*RetryBudgetConfig)
}

// Option sets a field that limiters, breakers and retry budgets all have:
// it is a LimiterOption, a BreakerOption and a RetryBudgetOption.
type Option interface {
	LimiterOption
	BreakerOption
	RetryBudgetOption
}

// BatchOption sets a field of the guards that send their counts to Redis
// in batches, breakers and retry budgets: it is a BreakerOption and a
// RetryBudgetOption.
type BatchOption interface {
	BreakerOption
	RetryBudgetOption
}

type retryBudgetOption func(*RetryBudgetConfig)

func (o retryBudgetOption) applyRetryBudget(c *RetryBudgetConfig) { o(c) }

type limiterOption func(*LimiterConfig)

func (o limiterOption) applyLimiter(c *LimiterConfig) { o(c) }

type breakerOption func(*BreakerConfig)

func (o breakerOption) applyBreaker(c *BreakerConfig) { o(c) }

// sharedOption is an Option: the same field of each configuration.
type sharedOption struct {
	l func(*LimiterConfig)
	b func(*BreakerConfig)
	r func(*RetryBudgetConfig)
}

func (o sharedOption) applyLimiter(c *LimiterConfig)         { o.l(c) }
func (o sharedOption) applyBreaker(c *BreakerConfig)         { o.b(c) }
func (o sharedOption) applyRetryBudget(c *RetryBudgetConfig) { o.r(c) }

// batchOption is a BatchOption.
type batchOption struct {
	b func(*BreakerConfig)
	r func(*RetryBudgetConfig)
}

func (o batchOption) applyBreaker(c *BreakerConfig)         { o.b(c) }
func (o batchOption) applyRetryBudget(c *RetryBudgetConfig) { o.r(c) }

// WithPrefix sets the Prefix of a limiter, a breaker or a retry budget:
// what every Redis key and channel of it starts with.
func WithPrefix(p string) Option {
	return sharedOption{func(c *LimiterConfig) { c.Prefix = p }, func(c *BreakerConfig) { c.Prefix = p },
		func(c *RetryBudgetConfig) { c.Prefix = p }}
}

// WithTimeout sets the Timeout of a limiter, a breaker or a retry budget:
// the longest a call (a retry budget's flush) waits on one Redis round
// trip.
func WithTimeout(d time.Duration) Option {
	return sharedOption{func(c *LimiterConfig) { c.Timeout = d }, func(c *BreakerConfig) { c.Timeout = d },
		func(c *RetryBudgetConfig) { c.Timeout = d }}
}

// WithProbeInterval sets the ProbeInterval of a limiter, a breaker or a
// retry budget: how often Redis is tried again while it is unreachable.
func WithProbeInterval(d time.Duration) Option {
	return sharedOption{func(c *LimiterConfig) { c.ProbeInterval = d }, func(c *BreakerConfig) { c.ProbeInterval = d },
		func(c *RetryBudgetConfig) { c.ProbeInterval = d }}
}

// WithLimiterConfig sets the non-zero fields of c (so it never erases
// an earlier option or a default). Options after it override single
// fields again. Its Name, Rate and Burst, if set, must be those given to
// [NewLimiter] or [NewKeyedLimiter]: the constructor panics otherwise.
func WithLimiterConfig(c LimiterConfig) LimiterOption {
	return limiterOption(func(d *LimiterConfig) { merge.NonZero(d, c) })
}

// WithMaxWait sets [LimiterConfig.MaxWait]: the longest Wait waits.
func WithMaxWait(d time.Duration) LimiterOption {
	return limiterOption(func(c *LimiterConfig) { c.MaxWait = d })
}

// WithFallback sets [LimiterConfig.FallbackRate] and FallbackBurst: each
// instance's own limit while Redis is unreachable.
func WithFallback(rate float64, burst int) LimiterOption {
	return limiterOption(func(c *LimiterConfig) { c.FallbackRate, c.FallbackBurst = rate, burst })
}

// WithObserver sets the Observer of a limiter, a breaker or a retry budget
// ([LimiterConfig.Observer], [BreakerConfig.Observer],
// [RetryBudgetConfig.Observer]): where its events go (nil: nowhere).
func WithObserver(o telemetry.Observer) Option {
	return sharedOption{func(c *LimiterConfig) { c.Observer = o }, func(c *BreakerConfig) { c.Observer = o },
		func(c *RetryBudgetConfig) { c.Observer = o }}
}

// WithBreakerConfig sets the non-zero fields of c (so it never erases
// an earlier option or a default). Its Name, if set, must be the name
// given to [NewBreaker]: NewBreaker panics otherwise. Options after it override
// single fields again.
func WithBreakerConfig(c BreakerConfig) BreakerOption {
	return breakerOption(func(d *BreakerConfig) { merge.NonZero(d, c) })
}

// WithThreshold sets [BreakerConfig.Threshold]: consecutive failures,
// fleet-wide, that trip.
func WithThreshold(n int) BreakerOption {
	return breakerOption(func(c *BreakerConfig) { c.Threshold = n })
}

// WithFailureRatio sets [BreakerConfig.FailureRatio], in [0, 1].
func WithFailureRatio(r float64) BreakerOption {
	return breakerOption(func(c *BreakerConfig) { c.FailureRatio = r })
}

// WithSlowCallRatio sets [BreakerConfig.SlowCallRatio], in [0, 1].
func WithSlowCallRatio(r float64) BreakerOption {
	return breakerOption(func(c *BreakerConfig) { c.SlowCallRatio = r })
}

// WithSlowCall sets [BreakerConfig.SlowCall]: the duration above which a
// call is slow.
func WithSlowCall(d time.Duration) BreakerOption {
	return breakerOption(func(c *BreakerConfig) { c.SlowCall = d })
}

// WithWindowDuration sets [BreakerConfig.WindowDuration]: the length of
// the shared window of the ratio rules.
func WithWindowDuration(d time.Duration) BreakerOption {
	return breakerOption(func(c *BreakerConfig) { c.WindowDuration = d })
}

// WithWindowBuckets sets [BreakerConfig.WindowBuckets]: the buckets of the
// shared window.
func WithWindowBuckets(n int) BreakerOption {
	return breakerOption(func(c *BreakerConfig) { c.WindowBuckets = n })
}

// WithMinCalls sets [BreakerConfig.MinCalls]: calls in the window before a
// ratio rule applies.
func WithMinCalls(n int) BreakerOption {
	return breakerOption(func(c *BreakerConfig) { c.MinCalls = n })
}

// WithCooldown sets [BreakerConfig.Cooldown]: how long the breaker stays
// open.
func WithCooldown(d time.Duration) BreakerOption {
	return breakerOption(func(c *BreakerConfig) { c.Cooldown = d })
}

// WithTrialTimeout sets [BreakerConfig.TrialTimeout]: how long a trial may
// go without reporting.
func WithTrialTimeout(d time.Duration) BreakerOption {
	return breakerOption(func(c *BreakerConfig) { c.TrialTimeout = d })
}

// WithMaxTrials sets [BreakerConfig.MaxTrials]: trial calls at once,
// fleet-wide.
func WithMaxTrials(n int) BreakerOption {
	return breakerOption(func(c *BreakerConfig) { c.MaxTrials = n })
}

// WithSuccessThreshold sets [BreakerConfig.SuccessThreshold]: successful
// trials in a row that close.
func WithSuccessThreshold(n int) BreakerOption {
	return breakerOption(func(c *BreakerConfig) { c.SuccessThreshold = n })
}

// WithClassify sets [BreakerConfig.Classify]: what an error says about the
// dependency.
func WithClassify(f func(error) breaker.Outcome) BreakerOption {
	return breakerOption(func(c *BreakerConfig) { c.Classify = f })
}

// WithOnStateChange sets [BreakerConfig.OnStateChange]: a callback for each
// change of state this instance sees.
func WithOnStateChange(f func(breaker.Transition)) BreakerOption {
	return breakerOption(func(c *BreakerConfig) { c.OnStateChange = f })
}

// WithOnRulesMismatch sets [BreakerConfig.OnRulesMismatch]: a callback for
// another instance's rules that differ from this one's.
func WithOnRulesMismatch(f func(error)) BreakerOption {
	return breakerOption(func(c *BreakerConfig) { c.OnRulesMismatch = f })
}

// WithFlushInterval sets the FlushInterval of a breaker or a retry budget
// ([BreakerConfig.FlushInterval], [RetryBudgetConfig.FlushInterval]): the
// longest an outcome (a count) waits in the instance before it is sent to
// Redis.
func WithFlushInterval(d time.Duration) BatchOption {
	return batchOption{func(c *BreakerConfig) { c.FlushInterval = d }, func(c *RetryBudgetConfig) { c.FlushInterval = d }}
}

// WithMaxBatch sets [BreakerConfig.MaxBatch]: the outcomes after which a
// batch is sent at once.
func WithMaxBatch(n int) BreakerOption {
	return breakerOption(func(c *BreakerConfig) { c.MaxBatch = n })
}

// WithRetryBudgetConfig sets the non-zero fields of c (so it never erases
// an earlier option or a default). Options after it override single
// fields again. Its Name, if set, must be the name given to
// [NewRetryBudget]: NewRetryBudget panics otherwise.
func WithRetryBudgetConfig(c RetryBudgetConfig) RetryBudgetOption {
	return retryBudgetOption(func(d *RetryBudgetConfig) { merge.NonZero(d, c) })
}

// WithRatio sets [RetryBudgetConfig.Ratio]: retries allowed per execution,
// fleet-wide, over the window (Off: only the floor).
func WithRatio(r float64) RetryBudgetOption {
	return retryBudgetOption(func(c *RetryBudgetConfig) { c.Ratio = r })
}

// WithMinPerSecond sets [RetryBudgetConfig.MinPerSecond]: the retries per
// second each instance may always make (Off: no floor).
func WithMinPerSecond(x float64) RetryBudgetOption {
	return retryBudgetOption(func(c *RetryBudgetConfig) { c.MinPerSecond = x })
}

// WithWindow sets [RetryBudgetConfig.Window]: the length of the sliding
// window over which executions and retries are counted.
func WithWindow(d time.Duration) RetryBudgetOption {
	return retryBudgetOption(func(c *RetryBudgetConfig) { c.Window = d })
}
