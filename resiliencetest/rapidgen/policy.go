package rapidgen

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
)

// Rand draws a seed, logged under label, and returns a random source made
// from it, for a policy's WithRand (retry, backoff, throttle, chaos): the
// property's seed then decides every draw, so a failing case replays
// exactly and shrinks towards seed 0. The source is for one policy; give
// each its own.
func Rand(t *rapid.T, label string) *rand.Rand {
	t.Helper()
	seed := rapid.Uint64().Draw(t, label)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// Backoff returns a generator of backoff schedules that the backoff
// constructors accept: constant, linear or exponential, with delays of up
// to 10 s and any jitter. Their jitter draws from a source seeded by the
// property (see [Rand]), so a failing case replays its waits exactly.
func Backoff() *rapid.Generator[backoff.Schedule] {
	return rapid.Custom(func(t *rapid.T) backoff.Schedule {
		base := millis(t, time.Millisecond, time.Second, "base")
		var s backoff.Schedule
		switch rapid.IntRange(0, 2).Draw(t, "growth") {
		case 0:
			s = backoff.Constant(base)
		case 1:
			s = backoff.Linear(base, millis(t, 0, time.Second, "step"), millis(t, base, 10*time.Second, "max"))
		default:
			mult := 1 + float64(rapid.IntRange(0, 30).Draw(t, "multiplier tenths above 1"))/10
			s = backoff.Exponential(base, mult, millis(t, base, 10*time.Second, "max"))
		}
		s = s.WithJitter(backoff.Jitter(rapid.IntRange(int(backoff.None), int(backoff.Decorrelated)).Draw(t, "jitter")))
		return s.WithRand(Rand(t, "jitter seed"))
	})
}

// RetrySettings are drawn settings of a retry policy: build one with
// retry.New[T](s.Options(clk)...).
type RetrySettings struct {
	Attempts   int              // calls in all, in [1, 6]
	Backoff    backoff.Schedule // from [Backoff]
	MaxElapsed time.Duration    // 0 (not set) or in [1ms, 30s]
}

// Retry returns a generator of retry settings.
func Retry() *rapid.Generator[RetrySettings] {
	return rapid.Custom(func(t *rapid.T) RetrySettings {
		s := RetrySettings{
			Attempts: rapid.IntRange(1, 6).Draw(t, "attempts"),
			Backoff:  Backoff().Draw(t, "backoff"),
		}
		if rapid.Bool().Draw(t, "bounded") {
			s.MaxElapsed = millis(t, time.Millisecond, 30*time.Second, "max elapsed")
		}
		return s
	})
}

// Options returns the options of s, on clk.
func (s RetrySettings) Options(clk clock.Clock) []retry.Option {
	opts := []retry.Option{retry.WithAttempts(s.Attempts), retry.WithBackoff(s.Backoff), retry.WithClock(clk)}
	if s.MaxElapsed > 0 {
		opts = append(opts, retry.WithMaxElapsed(s.MaxElapsed))
	}
	return opts
}

// String describes s, as "retry{Attempts: 3, Backoff: constant(100ms), MaxElapsed: 2s}".
func (s RetrySettings) String() string {
	fields := []string{"Attempts: " + strconv.Itoa(s.Attempts), "Backoff: " + s.Backoff.String()}
	if s.MaxElapsed > 0 {
		fields = append(fields, "MaxElapsed: "+s.MaxElapsed.String())
	}
	return "retry{" + strings.Join(fields, ", ") + "}"
}

// GoString is String.
func (s RetrySettings) GoString() string { return s.String() }

// BreakerSettings are drawn settings of a circuit breaker: build one with
// breaker.New(s.Options(clk)...).
type BreakerSettings struct {
	Threshold        int           // consecutive failures that trip, in [1, 10]
	Cooldown         time.Duration // in [1ms, 60s]
	MaxTrials        int           // in [1, 3]
	SuccessThreshold int           // in [1, 3]
}

// Breaker returns a generator of breaker settings.
func Breaker() *rapid.Generator[BreakerSettings] {
	return rapid.Custom(func(t *rapid.T) BreakerSettings {
		return BreakerSettings{
			Threshold:        rapid.IntRange(1, 10).Draw(t, "threshold"),
			Cooldown:         millis(t, time.Millisecond, time.Minute, "cooldown"),
			MaxTrials:        rapid.IntRange(1, 3).Draw(t, "max trials"),
			SuccessThreshold: rapid.IntRange(1, 3).Draw(t, "success threshold"),
		}
	})
}

// Options returns the options of s, on clk.
func (s BreakerSettings) Options(clk clock.Clock) []breaker.Option {
	return []breaker.Option{
		breaker.WithThreshold(s.Threshold), breaker.WithCooldown(s.Cooldown),
		breaker.WithMaxTrials(s.MaxTrials), breaker.WithSuccessThreshold(s.SuccessThreshold),
		breaker.WithClock(clk),
	}
}

// String describes s.
func (s BreakerSettings) String() string {
	return fmt.Sprintf("breaker{Threshold: %d, Cooldown: %v, MaxTrials: %d, SuccessThreshold: %d}",
		s.Threshold, s.Cooldown, s.MaxTrials, s.SuccessThreshold)
}

// GoString is String.
func (s BreakerSettings) GoString() string { return s.String() }

// LimiterSettings are drawn settings of a rate limiter: build one with
// s.New(clk).
type LimiterSettings struct {
	Rate  float64 // events per second, in [0.1, 1000]
	Burst int     // in [1, 100]
}

// Limiter returns a generator of rate limiter settings.
func Limiter() *rapid.Generator[LimiterSettings] {
	return rapid.Custom(func(t *rapid.T) LimiterSettings {
		return LimiterSettings{
			Rate:  float64(rapid.IntRange(1, 10000).Draw(t, "rate tenths")) / 10,
			Burst: rapid.IntRange(1, 100).Draw(t, "burst"),
		}
	})
}

// New returns a limiter of s on clk.
func (s LimiterSettings) New(clk clock.Clock) *ratelimit.Limiter {
	return ratelimit.New(s.Rate, s.Burst, ratelimit.WithClock(clk))
}

// String describes s.
func (s LimiterSettings) String() string {
	return fmt.Sprintf("limiter{Rate: %v, Burst: %d}", s.Rate, s.Burst)
}

// GoString is String.
func (s LimiterSettings) GoString() string { return s.String() }
