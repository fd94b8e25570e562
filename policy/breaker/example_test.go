package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

var errUnavailable = errors.New("503 service unavailable")

// report makes one call with a permit and reports err.
func report(b *breaker.Breaker, err error) {
	if p, aerr := b.Allow(); aerr == nil {
		p.Done(err)
	}
}

// The zero configuration: 5 consecutive failures trip the breaker; it
// stays open 30s, then one successful trial closes it.
func ExampleNew() {
	clk := clock.NewFake()
	b := breaker.New(breaker.WithName("payments"), breaker.WithClock(clk))
	for range 5 {
		report(b, errUnavailable)
	}
	_, err := b.Allow()
	fmt.Println(b.State(), err)

	clk.Advance(30 * time.Second)
	fmt.Println(b.State())
	report(b, nil)
	fmt.Println(b.State())
	// Output:
	// open breaker: open (payments), retry after 30s
	// half-open
	// closed
}

// Trip rule: consecutive failures, however far apart in time they come. A
// success in between starts the count over.
func ExampleWithThreshold() {
	clk := clock.NewFake()
	b := breaker.New(breaker.WithThreshold(3), breaker.WithClock(clk))
	report(b, errUnavailable)
	report(b, errUnavailable)
	report(b, nil)
	report(b, errUnavailable)
	clk.Advance(24 * time.Hour)
	report(b, errUnavailable)
	fmt.Println(b.State(), b.Counts().ConsecutiveFailures)
	report(b, errUnavailable)
	fmt.Println(b.State())
	// Output:
	// closed 2
	// open
}

// Trip rule: a failure ratio over a count-based window (the last 10
// calls), once the window holds at least 5 calls.
func ExampleWithFailureRatio() {
	b := breaker.New(breaker.WithFailureRatio(0.5), breaker.WithWindowCalls(10), breaker.WithMinCalls(5),
		breaker.WithClock(clock.NewFake()))
	for _, err := range []error{errUnavailable, errUnavailable, errUnavailable, nil} {
		report(b, err)
	}
	c := b.Counts()
	fmt.Printf("%v: %d of %d calls failed\n", b.State(), c.Failures, c.Calls) // too few calls to judge
	report(b, errUnavailable)
	fmt.Println(b.State())
	// Output:
	// closed: 3 of 4 calls failed
	// open
}

// Trip rule: a failure ratio over a time-based window (the last minute,
// in 6 buckets of 10s). Old calls age out without any call going through.
func ExampleWithWindowDuration() {
	clk := clock.NewFake()
	b := breaker.New(breaker.WithFailureRatio(0.5), breaker.WithWindowDuration(time.Minute),
		breaker.WithWindowBuckets(6), breaker.WithMinCalls(3), breaker.WithClock(clk))
	report(b, errUnavailable)
	report(b, errUnavailable)
	fmt.Println(b.Counts().Failures)
	clk.Advance(time.Minute)
	fmt.Println(b.Counts().Failures)
	report(b, nil)
	report(b, nil)
	report(b, errUnavailable)
	fmt.Println(b.State())
	// Output:
	// 2
	// 0
	// closed
}

// Trip rule: the ratio of slow calls (over 2s, successful or not).
func ExampleWithSlowCallRatio() {
	clk := clock.NewFake()
	b := breaker.New(breaker.WithSlowCallRatio(0.5), breaker.WithSlowCall(2*time.Second),
		breaker.WithWindowCalls(4), breaker.WithMinCalls(4), breaker.WithClock(clk))
	for _, d := range []time.Duration{time.Second, 3 * time.Second, time.Second, 5 * time.Second} {
		p, _ := b.Allow()
		clk.Advance(d) // the call takes d
		p.Done(nil)
		fmt.Print(b.State(), " ")
	}
	fmt.Println()
	// Output: closed closed closed open
}

// Trip rule: a custom rule on the counts, consulted after each failure or
// slow call.
func ExampleWithTripIf() {
	b := breaker.New(breaker.WithTripIf(func(c breaker.Counts) bool {
		return c.Failures >= 3 && c.Successes < c.Failures
	}), breaker.WithClock(clock.NewFake()))
	for _, err := range []error{errUnavailable, nil, nil, nil, errUnavailable, errUnavailable} {
		report(b, err)
	}
	fmt.Println(b.State()) // 3 failures, 3 successes
	report(b, errUnavailable)
	fmt.Println(b.State())
	// Output:
	// closed
	// open
}

// A cooldown that doubles each time a trial fails, up to 8s, and starts
// over when the breaker closes.
func ExampleWithCooldownBackoff() {
	clk := clock.NewFake()
	b := breaker.New(breaker.WithThreshold(1), breaker.WithClock(clk),
		breaker.WithCooldownBackoff(backoff.Exponential(time.Second, 2, 8*time.Second)))
	report(b, errUnavailable)
	for range 5 {
		_, err := b.Allow()
		d, _ := resilience.RetryAfter(err)
		fmt.Print(d, " ")
		clk.Advance(d)
		report(b, errUnavailable) // the trial fails
	}
	fmt.Println()
	// Output: 1s 2s 4s 8s 8s
}

// Half-open: up to MaxTrials trials at once; SuccessThreshold successful
// trials close the breaker.
func ExampleWithMaxTrials() {
	clk := clock.NewFake()
	b := breaker.New(breaker.WithThreshold(1), breaker.WithMaxTrials(2), breaker.WithSuccessThreshold(2),
		breaker.WithClock(clk))
	report(b, errUnavailable)
	clk.Advance(30 * time.Second)
	p1, _ := b.Allow()
	p2, _ := b.Allow()
	_, err := b.Allow()
	fmt.Println(err)
	p1.Done(nil)
	fmt.Println(b.State())
	p2.Done(nil)
	fmt.Println(b.State())
	// Output:
	// breaker: too many trials, retry after 30s
	// half-open
	// closed
}

type price struct{ cents int }

// One breaker guards one dependency: policies of any result type share it.
func ExamplePolicy() {
	b := breaker.New(breaker.WithName("pricing"), breaker.WithThreshold(2), breaker.WithClock(clock.NewFake()))
	prices := breaker.Policy[*price](b)
	stock := breaker.Policy[int](b)
	ctx := context.Background()

	_, err := prices.Do(ctx, func(context.Context) (*price, error) { return nil, errUnavailable })
	fmt.Println(err)
	_, err = stock.Do(ctx, func(context.Context) (int, error) { return 0, errUnavailable })
	fmt.Println(err)
	_, err = prices.Do(ctx, func(context.Context) (*price, error) { return &price{100}, nil })
	fmt.Println(errors.Is(err, breaker.ErrOpen), prices)
	// Output:
	// 503 service unavailable
	// 503 service unavailable
	// true breaker(pricing)
}

// The two-step form, for callers that cannot wrap the call in a function.
func ExampleBreaker_Allow() {
	b := breaker.New(breaker.WithClock(clock.NewFake()))
	p, err := b.Allow()
	if err != nil {
		fmt.Println("refused:", err)
		return
	}
	err = errUnavailable // the call
	p.Done(err)
	p.Done(nil) // a second report is ignored
	fmt.Printf("%+v\n", b.Counts())
	// Output:
	// {Calls:1 Successes:0 Failures:1 Slow:0 FailureRatio:1 ConsecutiveSuccesses:0 ConsecutiveFailures:1 Rejected:0}
}

// Report states the outcome outright, without an error to classify.
func ExamplePermit_Report() {
	b := breaker.New(breaker.WithClock(clock.NewFake()))
	p, _ := b.Allow()
	p.Report(breaker.Ignored) // e.g. the request was invalid: the dependency is not to blame
	fmt.Println(b.Counts().Calls)
	// Output: 0
}

// Outcomes observed elsewhere (another process, a health check) count
// while the breaker is closed.
func ExampleBreaker_Record() {
	b := breaker.New(breaker.WithThreshold(2), breaker.WithClock(clock.NewFake()))
	b.Record(true)
	b.Record(true)
	fmt.Println(b.State())
	// Output: open
}

func ExampleBreaker_ForceOpen() {
	b := breaker.New(breaker.WithName("db"), breaker.WithClock(clock.NewFake()))
	b.ForceOpen() // e.g. during maintenance
	_, err := b.Allow()
	fmt.Println(err)
	b.Reset()
	fmt.Println(b.State())
	// Output:
	// breaker: open (db), forced
	// closed
}

// A forced-closed breaker admits every call and keeps counting, but never
// trips: the breaker is disabled.
func ExampleBreaker_ForceClosed() {
	b := breaker.New(breaker.WithThreshold(1), breaker.WithClock(clock.NewFake()))
	b.ForceClosed()
	for range 10 {
		report(b, errUnavailable)
	}
	fmt.Println(b.State(), b.Counts().Failures)
	// Output: closed 10
}

// State and Counts read fresh: an open breaker whose cooldown has passed
// reads half-open without any call.
func ExampleBreaker_State() {
	clk := clock.NewFake()
	b := breaker.New(breaker.WithThreshold(1), breaker.WithCooldown(time.Second), breaker.WithClock(clk))
	report(b, errUnavailable)
	fmt.Println(b.State())
	clk.Advance(time.Second)
	fmt.Println(b.State())
	// Output:
	// open
	// half-open
}

// A callback sees every transition, in order, and may call the breaker.
func ExampleWithOnStateChange() {
	clk := clock.NewFake()
	var b *breaker.Breaker
	b = breaker.New(breaker.WithName("search"), breaker.WithThreshold(2), breaker.WithClock(clk),
		breaker.WithOnStateChange(func(t breaker.Transition) {
			fmt.Printf("%s: %v -> %v after %d failures; state now %v\n",
				t.Name, t.From, t.To, t.Counts.Failures, b.State())
		}))
	report(b, errUnavailable)
	report(b, errUnavailable)
	clk.Advance(30 * time.Second)
	report(b, nil)
	// Output:
	// search: closed -> open after 2 failures; state now open
	// search: open -> half-open after 0 failures; state now half-open
	// search: half-open -> closed after 0 failures; state now closed
}

// A classifier of your own, deferring to DefaultClassify for the rest: a
// "not found" answer means the dependency is healthy.
func ExampleDefaultClassify() {
	errNotFound := errors.New("not found")
	b := breaker.New(breaker.WithThreshold(1), breaker.WithClock(clock.NewFake()),
		breaker.WithClassify(func(err error) breaker.Outcome {
			if errors.Is(err, errNotFound) {
				return breaker.Success
			}
			return breaker.DefaultClassify(err)
		}))
	report(b, fmt.Errorf("get user 7: %w", errNotFound))
	report(b, fmt.Errorf("get user 8: %w", context.Canceled))
	fmt.Println(b.State(), b.Counts().Successes)
	// Output: closed 1
}

func ExampleRefusedError() {
	b := breaker.New(breaker.WithName("payments"), breaker.WithThreshold(1), breaker.WithClock(clock.NewFake()))
	report(b, errUnavailable)
	_, err := b.Allow()
	err = fmt.Errorf("charge: %w", err)

	var re *breaker.RefusedError
	if errors.As(err, &re) {
		fmt.Println(re.Name, re.RetryAfter())
	}
	fmt.Println(errors.Is(err, breaker.ErrOpen), errors.Is(err, resilience.ErrRefused))
	// Output:
	// payments 30s
	// true true
}

// A configuration read at run time: check it, then build the breaker.
func ExampleConfig_Validate() {
	cfg := breaker.Config{Name: "api", FailureRatio: 1.5}
	fmt.Println(cfg.Validate())
	cfg.FailureRatio = 0.5
	if err := cfg.Validate(); err == nil {
		b := breaker.New(breaker.WithConfig(cfg), breaker.WithClock(clock.NewFake()))
		fmt.Println(b.Name(), b.State())
	}
	// Output:
	// breaker: FailureRatio must be in [0, 1], got 1.5
	// api closed
}
