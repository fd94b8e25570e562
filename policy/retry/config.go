package retry

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/guardopt"
	"github.com/f0b5b96b/resilience/internal/jsonconf"
	"github.com/f0b5b96b/resilience/internal/merge"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Config is the whole configuration of a retry policy, one field per
// option, for configurations read at run time: give it to [New] with
// [WithConfig], after checking it with [Config.Validate].
//
// A zero field means the field's default, stated at each field, so
// Config{} is the default configuration: 3 attempts, no bound on the
// elapsed time, exponential backoff from 100 ms doubling up to 10 s with
// full jitter, waits of at most 10 s, every error retried but the caller's
// own context errors and resilience.Permanent ones, the real clock, no
// budget. A field that can be switched off says so; resilience.Off
// switches it off.
//
// A Config reads and writes JSON ([Config.MarshalJSON]) with durations as
// Go duration strings; RetryIf, OnRetry, Observer, Clock, Budget and Rand
// are not serialised.
type Config struct {
	// Name identifies the policy in its layer name ("retry(prices)") and
	// its events. "" (the default): no name, the layer is "retry".
	Name string

	// Attempts is the most calls of the op in one execution, the first call
	// included: 1 means no retry. 0 means 3. resilience.Off means no limit
	// on the number of attempts, and is valid only with a MaxElapsed > 0
	// and a Backoff whose Max is > 0 (such a schedule's delays are above
	// 0, see backoff.Schedule.Max: never an unbounded tight loop).
	Attempts int

	// MaxElapsed bounds one execution in time, measured on Clock from the
	// start of its first attempt, waits included: no wait starts that would
	// end later than MaxElapsed after that start. It does not cut an
	// attempt short; put a timeout policy inside the retry for that. 0
	// means no bound.
	MaxElapsed time.Duration

	// Backoff gives the wait before each retry: the delay before retry k is
	// the k-th delay of a fresh [backoff.Sequence] of Backoff (one per
	// execution). The zero Schedule (not set) means
	// backoff.Exponential(100*time.Millisecond, 2, 10*time.Second) with
	// backoff.Full jitter; backoff.Constant(0) is no wait at all.
	Backoff backoff.Schedule

	// MaxWait is the longest single wait. A Backoff delay above it is cut
	// to MaxWait; a Retry-After hint above it ends the execution at once
	// with an [Error] matching [ErrMaxWait], as a hint past MaxElapsed
	// does (a hint of resilience.Never comes back as it is, as always). 0
	// means the larger of the Backoff's Max and 10 s: 10 s with the default
	// Backoff, and never less, so that a Backoff of short waits or none
	// still honours ordinary hints (a rate limiter's, a "Retry-After: 2").
	// resilience.Off switches the cap off: a hint is waited for however
	// long it is, within MaxElapsed and the context's deadline.
	MaxWait time.Duration

	// MaxRefusalWait is the longest Retry-After hint of an inner guard's
	// refusal (an error matching resilience.ErrRefused) that the policy
	// waits for. A refusal whose hint is longer comes back at once, as it
	// is, whatever the attempts left: behind an open breaker (whose hint
	// is the rest of its cooldown) or a half-open one with its trials
	// taken, a call fails fast instead of holding its caller for the
	// cooldown. A refusal with a hint of at most MaxRefusalWait (a rate
	// limiter's pushback, a cooldown about to end) is retried after at
	// least its hint, as an error with a hint is, and a refusal with no
	// hint (a full bulkhead) after the backoff. 0 means 100 ms.
	// resilience.Off switches the bound off: a refusal's hint is waited
	// for as any hint is, up to MaxWait (the policy then waits out an open
	// breaker's cooldown when it fits MaxWait and MaxElapsed). It bounds
	// hints of refusals only: a server's hint (an HTTP 429 or 503 with
	// Retry-After) is bounded by MaxWait alone.
	MaxRefusalWait time.Duration

	// RetryIf reports whether an attempt's error is worth another attempt.
	// It is consulted for every failed attempt whose error is not marked
	// resilience.Permanent, even when the caller's context is done (an
	// error it rejects comes back as it is), and never sees a nil error.
	// The caller's own context errors are never retried, whatever it says.
	// nil retries every other error.
	RetryIf func(err error) bool

	// OnRetry, if not nil, is called before each wait with the number of
	// the attempt that failed (1 for the first call), its error and the
	// wait about to start. It runs on the caller's goroutine. nil: no hook.
	OnRetry func(attempt int, err error, delay time.Duration)

	// Observer, if not nil, receives the policy's events (see package
	// telemetry for the table), on the caller's goroutine: each failed
	// attempt (retry.attempt_failed: Attempt, Err), each wait about to
	// start (retry.waiting: Attempt, Err and Wait, as OnRetry gets them,
	// after OnRetry), and giving up (retry.gave_up: Attempt, the attempts
	// made, and Err, the [Error]'s Reason). An error the policy does not
	// retry at all (Permanent, rejected by RetryIf, a Never hint) is an
	// attempt_failed and no gave_up: it comes back as it is. Every
	// attempt, successes included, reports its duration (retry.attempt:
	// Attempt, Elapsed, Err), and every call that made an attempt its own
	// (retry.call: Elapsed, the attempts and the waits, and Err, the error
	// returned): the exporters' and the dashboard's call and attempt
	// durations, with no layer of theirs in the chain. They cost two
	// readings of Clock per attempt and one more per call that retried
	// (two in all for a first attempt that succeeds), and no allocation. nil (the default) means no events, and no clock
	// reading for them.
	Observer telemetry.Observer

	// Clock is the source of time for waits, for MaxElapsed, for the
	// time left until the context's deadline, and for the durations the
	// Observer gets. nil means clock.Real().
	Clock clock.Clock

	// Budget, if not nil, is the retry budget shared by every retry policy
	// that calls the same dependency: each execution is counted in it
	// (Deposit), and each retry needs its permission (Withdraw). A [Budget]
	// bounds the retries of one process; a fleet-wide budget (such as
	// resilienceredis.RetryBudget) those of every instance. nil means no
	// budget, and so does a Budgeter that is a nil pointer (a nil *Budget,
	// a nil *resilienceredis.RetryBudget): it is checked once, when the
	// policy is built, not at each call.
	Budget Budgeter

	// Rand, if not nil, is the random source of the Backoff's jitter, in
	// place of the Backoff's own (see backoff.Schedule.WithRand): a seeded
	// one makes the waits repeatable, the same seed giving the same waits
	// draw for draw. The policy draws from it under a mutex, so executions
	// on many goroutines may share it; Rand must not be used elsewhere
	// while the policy is in use. nil (the default) keeps the Backoff's
	// source (math/rand/v2's top-level functions unless the Backoff has
	// one). It is not written to or read from JSON.
	Rand *rand.Rand
}

// The defaults of the fields whose zero value means one.
const (
	defaultAttempts = 3
	defaultMaxWait  = 10 * time.Second // the least default; defaultBackoff's Max

	defaultMaxRefusalWait = 100 * time.Millisecond
)

var defaultBackoff = backoff.Exponential(100*time.Millisecond, 2, 10*time.Second).WithJitter(backoff.Full)

// backoff returns c.Backoff, or the default if it is not set.
func (c *Config) backoff() backoff.Schedule {
	if c.Backoff.IsZero() {
		return defaultBackoff
	}
	return c.Backoff
}

// resolved returns c with every default filled in, as the policy runs
// it: Attempts Off (no limit) stays Off, MaxWait and MaxRefusalWait Off
// become resilience.Never (no hint is longer).
func (c Config) resolved() Config {
	if c.Attempts == 0 {
		c.Attempts = defaultAttempts
	}
	c.Backoff = c.backoff()
	if c.Rand != nil {
		c.Backoff = c.Backoff.WithRand(c.Rand)
	}
	switch c.MaxWait {
	case 0:
		c.MaxWait = max(c.Backoff.Max(), defaultMaxWait)
	case resilience.Off:
		c.MaxWait = resilience.Never
	}
	switch c.MaxRefusalWait {
	case 0:
		c.MaxRefusalWait = defaultMaxRefusalWait
	case resilience.Off:
		c.MaxRefusalWait = resilience.Never
	}
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	if nilBudgeter(c.Budget) {
		c.Budget = nil // a typed nil is no budget
	}
	return c
}

// nilBudgeter reports whether b is nil or holds a nil pointer (a nil
// *Budget, a nil *resilienceredis.RetryBudget) or another nil value: no
// budget. It runs once, when the policy is built.
func nilBudgeter(b Budgeter) bool {
	if b == nil {
		return true
	}
	switch v := reflect.ValueOf(b); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// zeroBudget reports whether b is a *Budget not made by NewBudget.
func zeroBudget(b Budgeter) bool {
	lb, ok := b.(*Budget)
	return ok && lb != nil && lb.width == 0
}

// Validate reports whether c is a valid configuration: nil if it is, else
// an error naming the first field at fault and its value, the same message
// [New] panics with. Config{} is valid.
func (c Config) Validate() error {
	switch {
	case c.Attempts < resilience.Off:
		return fmt.Errorf("retry: Attempts must be >= 1, 0 (the default, 3) or Off (-1, no limit), got %d", c.Attempts)
	case c.MaxElapsed < 0:
		return fmt.Errorf("retry: MaxElapsed must be >= 0 (0: no bound), got %s", jsonconf.Duration(c.MaxElapsed))
	case c.MaxWait < 0 && c.MaxWait != resilience.Off:
		return fmt.Errorf("retry: MaxWait must be > 0, 0 (the default) or Off (no cap), got %v", c.MaxWait)
	case c.MaxRefusalWait < 0 && c.MaxRefusalWait != resilience.Off:
		return fmt.Errorf("retry: MaxRefusalWait must be > 0, 0 (the default, 100ms) or Off (no bound), got %v", c.MaxRefusalWait)
	case c.Attempts == resilience.Off && c.MaxElapsed == 0:
		return fmt.Errorf("retry: Attempts Off (no limit) needs a MaxElapsed > 0, got %v", c.MaxElapsed)
	case c.Attempts == resilience.Off && c.backoff().Max() == 0:
		return fmt.Errorf("retry: Attempts Off (no limit) needs a Backoff with Max > 0, got %v", c.Backoff)
	case zeroBudget(c.Budget):
		return fmt.Errorf("retry: Budget must be made by NewBudget, got a zero Budget")
	}
	return nil
}

// MarshalJSON writes c as a JSON object of its non-zero fields, by their Go
// names: durations as Go duration strings ("250ms"; MaxWait Off as
// "off"), Attempts Off as -1, Backoff as [backoff.Schedule.MarshalJSON]
// writes it.
// RetryIf, OnRetry, Observer, Clock, Budget and Rand are left out.
func (c Config) MarshalJSON() ([]byte, error) { return jsonconf.Marshal(c) }

// UnmarshalJSON reads what [Config.MarshalJSON] writes into c: the fields
// present set c's, absent or null ones leave c's as they are. An unknown
// field, a duration that is not a Go duration string, or an invalid
// Backoff is an error naming the field. It does not validate: call
// [Config.Validate].
func (c *Config) UnmarshalJSON(data []byte) error {
	// jsonconf reads field by field, never the whole struct through
	// encoding/json, so passing c itself does not recurse, and errors name
	// the type "Config".
	return jsonconf.Unmarshal("retry", data, c)
}

// Option configures a retry policy built by [New]. Options are made by the
// With functions of this package and apply in order: the last one to set a
// field wins.
type Option interface{ apply(*Config) }

type option func(*Config)

func (o option) apply(c *Config) { o(c) }

// WithName sets [Config.Name]: the policy's name, in its layer name and
// its events ("" = none, the default).
// It panics if name is not valid UTF-8 (see telemetry.CheckName).
func WithName(name string) Option {
	guardopt.Name("retry", name)
	return option(func(c *Config) { c.Name = name })
}

// WithObserver sets [Config.Observer]: where the policy's events go (nil =
// nowhere, the default).
func WithObserver(o telemetry.Observer) Option { return option(func(c *Config) { c.Observer = o }) }

// WithAttempts sets [Config.Attempts]: the most calls of the op, the first
// included (1 = no retry; resilience.Off = no limit, which needs
// WithMaxElapsed). Without it, 3. It panics if n is 0 or below 1 other
// than Off: an explicit 0 would silently mean the default.
func WithAttempts(n int) Option {
	if n < 1 && n != resilience.Off {
		panic(fmt.Sprintf("retry: WithAttempts(%d): attempts must be >= 1 (1 = no retry), or resilience.Off for no limit; leave the option out for the default, 3", n))
	}
	return option(func(c *Config) { c.Attempts = n })
}

// WithMaxElapsed sets [Config.MaxElapsed]: the bound on one execution's time,
// waits included. Without it, no bound. It panics if d <= 0.
func WithMaxElapsed(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("retry: WithMaxElapsed(%v): the bound must be > 0; leave the option out for no bound", d))
	}
	return option(func(c *Config) { c.MaxElapsed = d })
}

// WithBackoff sets [Config.Backoff]: the schedule of waits between attempts.
// Without it, exponential with full jitter (see Config.Backoff). It panics
// if s is the zero Schedule (not set): backoff.Constant(0) is no wait.
func WithBackoff(s backoff.Schedule) Option {
	if s.IsZero() {
		panic("retry: WithBackoff(backoff.Schedule{}): the zero Schedule is not set; use backoff.Constant(0) for no wait, or leave the option out for the default")
	}
	return option(func(c *Config) { c.Backoff = s })
}

// WithMaxWait sets [Config.MaxWait]: the longest single wait; a Retry-After
// hint beyond it ends the execution (resilience.Off = no cap). Without it,
// the larger of the Backoff's Max and 10 s. It panics if d is 0 or
// negative other than Off.
func WithMaxWait(d time.Duration) Option {
	if d <= 0 && d != resilience.Off {
		panic(fmt.Sprintf("retry: WithMaxWait(%v): the wait must be > 0, or resilience.Off for no cap; leave the option out for the default", d))
	}
	return option(func(c *Config) { c.MaxWait = d })
}

// WithMaxRefusalWait sets [Config.MaxRefusalWait]: the longest Retry-After
// hint of an inner guard's refusal that the policy waits for; a refusal
// with a longer hint (an open breaker's) comes back at once, as it is.
// resilience.Off waits for refusals' hints as for any other, up to
// MaxWait. It panics if d is 0 or negative other than Off (the default,
// 100 ms, is what not giving the option means).
func WithMaxRefusalWait(d time.Duration) Option {
	if d <= 0 && d != resilience.Off {
		panic(fmt.Sprintf("retry: WithMaxRefusalWait(%v): the wait must be > 0, or resilience.Off for no bound", d))
	}
	return option(func(c *Config) { c.MaxRefusalWait = d })
}

// WithRetryIf sets [Config.RetryIf]: which errors are worth another attempt
// (nil = all but the built-in exceptions).
func WithRetryIf(f func(err error) bool) Option {
	return option(func(c *Config) { c.RetryIf = f })
}

// WithOnRetry sets [Config.OnRetry]: a hook called before each wait.
func WithOnRetry(f func(attempt int, err error, delay time.Duration)) Option {
	return option(func(c *Config) { c.OnRetry = f })
}

// WithClock sets [Config.Clock]: the source of time.
// It panics if c is nil: leave the option out for clock.Real().
func WithClock(c clock.Clock) Option {
	guardopt.Clock("retry", c)
	return option(func(cfg *Config) { cfg.Clock = c })
}

// WithRand sets [Config.Rand]: the Backoff's jitter draws from r, under a
// mutex of the policy's, so that a seeded r makes the waits repeatable and
// executions on many goroutines may share it; r must not be used elsewhere
// while the policy is in use. It panics if r is nil: leave the option out
// for the default source.
func WithRand(r *rand.Rand) Option {
	if r == nil {
		panic("retry: WithRand(nil): the source must not be nil; leave the option out for the Backoff's own (math/rand/v2's by default)")
	}
	return option(func(c *Config) { c.Rand = r })
}

// WithBudget sets [Config.Budget]: a retry budget shared per dependency, a
// [*Budget] of this process or any other [Budgeter], such as a fleet-wide
// one. nil, or a Budgeter that is a nil pointer (a nil *Budget, a nil
// *resilienceredis.RetryBudget), is no budget.
func WithBudget(b Budgeter) Option { return option(func(c *Config) { c.Budget = b }) }

// WithConfig sets the fields of c that are not zero, and leaves the others
// as the defaults and the options before it set them: it never erases an
// earlier option. Options after it override its fields as usual.
func WithConfig(c Config) Option { return option(func(d *Config) { merge.NonZero(d, c) }) }
