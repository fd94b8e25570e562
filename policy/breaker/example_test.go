package breaker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
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
	// {Calls:1 Successes:0 Failures:1 Slow:0 FailureRatio:1 ConsecutiveSuccesses:0 ConsecutiveFailures:1 Refused:0}
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
	// breaker: forced open (db), retry never
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

func Example_refusal() {
	b := breaker.New(breaker.WithName("payments"), breaker.WithThreshold(1), breaker.WithClock(clock.NewFake()))
	report(b, errUnavailable)
	_, err := b.Allow()
	err = fmt.Errorf("charge: %w", err)

	var re *resilience.RefusedError
	if errors.As(err, &re) {
		fmt.Println(re.Name(), re.RetryAfter())
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

// Done classifies the call's error: nil is a success, context.Canceled is
// ignored, other errors are failures. Only the first report counts.
func ExamplePermit_Done() {
	b := breaker.New(breaker.WithClock(clock.NewFake()))
	for _, err := range []error{nil, errUnavailable, context.Canceled} {
		p, _ := b.Allow()
		p.Done(err)
		p.Done(nil) // ignored: the permit has reported
	}
	c := b.Counts()
	fmt.Println(c.Successes, c.Failures, c.Calls)
	// Output: 1 1 2
}

// Reset closes the breaker whatever its state, with counts from zero.
func ExampleBreaker_Reset() {
	b := breaker.New(breaker.WithThreshold(1), breaker.WithClock(clock.NewFake()))
	report(b, errUnavailable)
	fmt.Println(b.State())
	b.Reset() // e.g. after a deployment fixed the dependency
	fmt.Println(b.State(), b.Counts().Failures)
	// Output:
	// open
	// closed 0
}

// Counts are a snapshot of the current state's counts, here over a window
// of the last 4 calls.
func ExampleBreaker_Counts() {
	b := breaker.New(breaker.WithThreshold(10), breaker.WithWindowCalls(4), breaker.WithClock(clock.NewFake()))
	for _, err := range []error{errUnavailable, nil, errUnavailable, nil, errUnavailable, errUnavailable} {
		report(b, err)
	}
	c := b.Counts()
	fmt.Printf("%d of the last %d calls failed (%.2f), %d in a row\n", c.Failures, c.Calls, c.FailureRatio, c.ConsecutiveFailures)
	// Output: 3 of the last 4 calls failed (0.75), 2 in a row
}

func ExampleBreaker_Name() {
	b := breaker.New(breaker.WithName("inventory"), breaker.WithClock(clock.NewFake()))
	fmt.Printf("%q %v\n", b.Name(), breaker.Policy[int](b))
	// Output: "inventory" breaker(inventory)
}

// A count-based window: the failure ratio over the last 5 calls. Older
// failures leave the window as new calls come.
func ExampleWithWindowCalls() {
	b := breaker.New(breaker.WithFailureRatio(0.6), breaker.WithWindowCalls(5), breaker.WithClock(clock.NewFake()))
	for _, err := range []error{errUnavailable, errUnavailable, nil, nil, nil, nil} {
		report(b, err)
	}
	fmt.Println(b.Counts().Failures) // the first failure has left the window
	report(b, errUnavailable)
	report(b, errUnavailable)
	fmt.Println(b.State()) // 2 of 5: 0.4
	report(b, errUnavailable)
	fmt.Println(b.State()) // 3 of 5: 0.6
	// Output:
	// 1
	// closed
	// open
}

// No ratio rule applies before the window holds MinCalls calls: two
// failures out of two do not trip a ratio of 0.5 that needs 4 calls.
func ExampleWithMinCalls() {
	b := breaker.New(breaker.WithFailureRatio(0.5), breaker.WithMinCalls(4), breaker.WithClock(clock.NewFake()))
	report(b, errUnavailable)
	report(b, errUnavailable)
	report(b, nil)
	fmt.Println(b.State(), b.Counts().Calls)
	report(b, errUnavailable) // 3 of 4
	fmt.Println(b.State())
	// Output:
	// closed 3
	// open
}

// Three successful trials in a row close the breaker; one trial at a time.
func ExampleWithSuccessThreshold() {
	clk := clock.NewFake()
	b := breaker.New(breaker.WithThreshold(1), breaker.WithSuccessThreshold(3), breaker.WithClock(clk))
	report(b, errUnavailable)
	clk.Advance(30 * time.Second)
	for range 3 {
		report(b, nil)
		fmt.Print(b.State(), " ")
	}
	fmt.Println()
	// Output: half-open half-open closed
}

// WithConfig sets the non-zero fields of a Config: the options before it
// keep the fields it leaves zero (here the clock and MinCalls), and options
// after it override single fields (here Cooldown).
func ExampleWithConfig() {
	cfg := breaker.Config{Name: "search", FailureRatio: 0.5, WindowCalls: 20, Cooldown: time.Minute}
	clk := clock.NewFake()
	b := breaker.New(breaker.WithClock(clk), breaker.WithMinCalls(2),
		breaker.WithConfig(cfg), breaker.WithCooldown(5*time.Second))
	report(b, errUnavailable)
	report(b, errUnavailable)
	_, err := b.Allow()
	fmt.Println(err)
	// Output: breaker: open (search), retry after 5s
}

// A configuration file: decode it into a Config (durations are Go duration
// strings, the growing cooldown a backoff schedule, -1 is resilience.Off),
// check it, then build the breaker. Fields the file leaves out keep their
// defaults; functions and the clock are given as options.
func ExampleConfig_json() {
	const file = `{
		"Name": "search",
		"Threshold": -1,
		"FailureRatio": 0.5,
		"WindowDuration": "1m",
		"MinCalls": 4,
		"CooldownBackoff": {"Kind": "exponential", "Base": "10s", "Multiplier": 2, "Max": "2m"}
	}`
	var cfg breaker.Config
	if err := json.Unmarshal([]byte(file), &cfg); err != nil {
		fmt.Println(err)
		return
	}
	if err := cfg.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	clk := clock.NewFake()
	b := breaker.New(breaker.WithConfig(cfg), breaker.WithClock(clk))
	for _, err := range []error{errUnavailable, nil, errUnavailable, errUnavailable} {
		report(b, err)
	}
	_, err := b.Allow()
	fmt.Println(err)

	out, _ := json.Marshal(cfg)
	fmt.Println(string(out))
	// Output:
	// breaker: open (search), retry after 10s
	// {"Name":"search","Threshold":-1,"FailureRatio":0.5,"WindowDuration":"1m0s","MinCalls":4,"CooldownBackoff":{"Kind":"exponential","Base":"10s","Multiplier":2,"Max":"2m0s"}}
}

// A classifier decides what an error says about the dependency: here a
// client error (HTTP 4xx) is the caller's fault, and a rate limit counts
// neither way.
func ExampleWithClassify() {
	errBadRequest := errors.New("400 bad request")
	errTooMany := errors.New("429 too many requests")
	b := breaker.New(breaker.WithThreshold(2), breaker.WithClock(clock.NewFake()),
		breaker.WithClassify(func(err error) breaker.Outcome {
			switch {
			case errors.Is(err, errBadRequest):
				return breaker.Success // the dependency answered
			case errors.Is(err, errTooMany):
				return breaker.Ignored
			}
			return breaker.DefaultClassify(err)
		}))
	for _, err := range []error{errUnavailable, errBadRequest, errUnavailable, errTooMany} {
		report(b, err)
	}
	c := b.Counts()
	fmt.Println(b.State(), c.Successes, c.Failures, c.ConsecutiveFailures)
	report(b, errUnavailable) // the ignored call did not break the run of failures
	fmt.Println(b.State())
	// Output:
	// closed 1 2 1
	// open
}

// A short cooldown but a slow dependency: a trial may take up to a minute
// before it expires and the breaker opens again.
func ExampleWithTrialTimeout() {
	clk := clock.NewFake()
	b := breaker.New(breaker.WithThreshold(1), breaker.WithCooldown(time.Second),
		breaker.WithTrialTimeout(time.Minute), breaker.WithClock(clk))
	report(b, errUnavailable)
	clk.Advance(time.Second)

	p, _ := b.Allow() // a trial
	_, err := b.Allow()
	fmt.Println(err)
	clk.Advance(20 * time.Second) // the call takes 20s: well past the cooldown
	p.Done(nil)
	fmt.Println(b.State())

	report(b, errUnavailable)
	clk.Advance(time.Second)
	_, _ = b.Allow() // a trial that never reports
	clk.Advance(time.Minute)
	fmt.Println(b.State())
	// Output:
	// breaker: too many trials, retry after 1m0s
	// closed
	// open
}

// The breaker stays open for the cooldown after it trips, then admits a
// trial call.
func ExampleWithCooldown() {
	clk := clock.NewFake()
	b := breaker.New(breaker.WithThreshold(1), breaker.WithCooldown(5*time.Second), breaker.WithClock(clk))
	report(b, errUnavailable)
	clk.Advance(4 * time.Second)
	_, err := b.Allow()
	fmt.Println(err)
	clk.Advance(time.Second)
	fmt.Println(b.State())
	// Output:
	// breaker: open, retry after 1s
	// half-open
}

// The name appears in the policy layer's name and in refusals.
func ExampleWithName() {
	for _, b := range []*breaker.Breaker{
		breaker.New(breaker.WithThreshold(1), breaker.WithClock(clock.NewFake())),
		breaker.New(breaker.WithThreshold(1), breaker.WithClock(clock.NewFake()), breaker.WithName("payments")),
	} {
		report(b, errUnavailable)
		_, err := b.Allow()
		fmt.Printf("%v: %v\n", breaker.Policy[int](b), err)
	}
	// Output:
	// breaker: breaker: open, retry after 30s
	// breaker(payments): breaker: open (payments), retry after 30s
}

// The breaker reads every time from its clock: cooldowns, windows, slow
// calls and the times of transitions. A fake clock makes them exact.
func ExampleWithClock() {
	clk := clock.NewFake()
	clk.Set(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	b := breaker.New(breaker.WithThreshold(1), breaker.WithClock(clk),
		breaker.WithOnStateChange(func(t breaker.Transition) {
			fmt.Println(t.At.Format(time.TimeOnly), t.From, "->", t.To)
		}))
	report(b, errUnavailable)
	clk.Advance(time.Hour)
	report(b, nil) // the trial
	// Output:
	// 12:00:00 closed -> open
	// 12:00:30 open -> half-open
	// 13:00:00 half-open -> closed
}

// A call over SlowCall is slow, even when it succeeds: it counts in
// Counts.Slow, and a slow trial opens the breaker again.
func ExampleWithSlowCall() {
	clk := clock.NewFake()
	b := breaker.New(breaker.WithThreshold(1), breaker.WithSlowCall(2*time.Second), breaker.WithClock(clk))
	p, _ := b.Allow()
	clk.Advance(3 * time.Second) // the call takes 3s
	p.Done(nil)
	fmt.Println(b.State(), b.Counts().Slow)

	report(b, errUnavailable)
	clk.Advance(30 * time.Second)
	p, _ = b.Allow() // a trial
	clk.Advance(3 * time.Second)
	p.Done(nil)
	fmt.Println(b.State())
	// Output:
	// closed 1
	// open
}

// Buckets set how finely calls leave a time-based window: in 2 buckets of
// 30s, a call leaves 30s to 60s after it finished; in 60 buckets of 1s,
// 59s to 60s after.
func ExampleWithWindowBuckets() {
	for _, n := range []int{2, 60} {
		clk := clock.NewFake()
		b := breaker.New(breaker.WithFailureRatio(0.5), breaker.WithWindowDuration(time.Minute),
			breaker.WithWindowBuckets(n), breaker.WithClock(clk))
		clk.Advance(29 * time.Second)
		report(b, errUnavailable)
		clk.Advance(31 * time.Second)
		fmt.Printf("%d buckets: %d failure(s) in the window 31s later\n", n, b.Counts().Failures)
	}
	// Output:
	// 2 buckets: 0 failure(s) in the window 31s later
	// 60 buckets: 1 failure(s) in the window 31s later
}

// RetryAfter is the time left in the cooldown when the call was refused,
// and the largest Duration ("never") for a breaker forced open.
func Example_refusalRetryAfter() {
	clk := clock.NewFake()
	b := breaker.New(breaker.WithThreshold(1), breaker.WithClock(clk))
	report(b, errUnavailable)
	clk.Advance(20 * time.Second)
	var re *resilience.RefusedError
	if _, err := b.Allow(); errors.As(err, &re) {
		fmt.Println(re.RetryAfter())
	}
	b.ForceOpen()
	if _, err := b.Allow(); errors.As(err, &re) {
		fmt.Println(re.RetryAfter() == math.MaxInt64, re)
	}
	// Output:
	// 10s
	// true breaker: forced open, retry never
}

// A state reads as a short lower-case word, fit for logs and metric labels.
func ExampleState_String() {
	for _, s := range []breaker.State{breaker.Closed, breaker.Open, breaker.HalfOpen} {
		fmt.Printf("breaker_state{state=%q} %d\n", s, s)
	}
	// Output:
	// breaker_state{state="closed"} 0
	// breaker_state{state="open"} 1
	// breaker_state{state="half-open"} 2
}

// An observer sees the failures counted, the transitions, the refusals
// and the ignored outcomes; successes are counted in Stats, not streamed.
func ExampleWithObserver() {
	clk := clock.NewFake()
	b := breaker.New(breaker.WithName("search"), breaker.WithThreshold(2), breaker.WithCooldown(time.Minute),
		breaker.WithClock(clk), breaker.WithObserver(telemetry.ObserverFunc(func(e telemetry.Event) {
			switch {
			case e.To != "":
				fmt.Printf("%s %s: %s -> %s, wait %v\n", e.Type, e.Name, e.From, e.To, e.Wait)
			default:
				fmt.Printf("%s %s: %v\n", e.Type, e.Name, e.Err)
			}
		})))
	report(b, nil) // no event
	report(b, context.Canceled)
	report(b, errUnavailable)
	report(b, errUnavailable)
	report(b, nil) // refused
	// Output:
	// breaker.ignored search: context canceled
	// breaker.failure search: 503 service unavailable
	// breaker.failure search: 503 service unavailable
	// breaker.opened search: closed -> open, wait 1m0s
	// breaker.refused search: breaker: open (search), retry after 1m0s
}

// Stats reads state, generation and counts together, and the refusals of
// the breaker's whole life.
func ExampleBreaker_Stats() {
	clk := clock.NewFake()
	b := breaker.New(breaker.WithThreshold(1), breaker.WithCooldown(time.Second), breaker.WithClock(clk))
	report(b, nil)
	report(b, errUnavailable) // trips
	report(b, nil)            // refused
	s := b.Stats()
	fmt.Printf("%v, generation %d, %d refused now, %d in all\n", s.State, s.Generation, s.Counts.Refused, s.Refused)
	clk.Advance(time.Second)
	report(b, nil) // a successful trial closes it
	s = b.Stats()
	fmt.Printf("%v, generation %d, %d refused now, %d in all\n", s.State, s.Generation, s.Counts.Refused, s.Refused)
	// Output:
	// open, generation 2, 1 refused now, 1 in all
	// closed, generation 4, 0 refused now, 1 in all
}

// Snapshot is Stats in the shape every guard shares, for registries and
// exporters.
func ExampleBreaker_Snapshot() {
	b := breaker.New(breaker.WithName("search"), breaker.WithClock(clock.NewFake()))
	b.ForceOpen()
	report(b, nil)
	s := b.Snapshot()
	forced, _ := s.Value("forced")
	fmt.Println(s.Kind, s.Name, s.State, forced, s.Refused)
	// Output: breaker search open 1 1
}
