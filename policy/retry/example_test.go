package retry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

// flaky returns an op that fails n times with err, then returns "ok".
func flaky(n int, err error) func(context.Context) (string, error) {
	calls := 0
	return func(context.Context) (string, error) {
		calls++
		if calls <= n {
			fmt.Println("attempt", calls, "failed")
			return "", err
		}
		fmt.Println("attempt", calls, "succeeded")
		return "ok", nil
	}
}

var errUnavailable = errors.New("503 service unavailable")

// instantClock is a fake clock whose Sleep does not block: it moves the
// fake time on by the wait at once, so an example's waits take no real
// time.
type instantClock struct{ *clock.Fake }

func (c instantClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return nil
}

// fakeWaits returns the options that make an example's waits take no real
// time: an instantClock. print, if set, is called with each wait.
func fakeWaits(print func(attempt int, err error, delay time.Duration)) []retry.Option {
	opts := []retry.Option{retry.WithClock(instantClock{clock.NewFake()})}
	if print != nil {
		opts = append(opts, retry.WithOnRetry(print))
	}
	return opts
}

func ExampleNew() {
	// The defaults: 3 attempts, exponential backoff from 100 ms with full
	// jitter, capped at 10 s. (fakeWaits makes the waits take no real time.)
	p := retry.New[string](fakeWaits(nil)...)
	v, err := p.Do(context.Background(), flaky(2, errUnavailable))
	fmt.Println(v, err)
	// Output:
	// attempt 1 failed
	// attempt 2 failed
	// attempt 3 succeeded
	// ok <nil>
}

func ExampleWithAttempts() {
	p := retry.New[string](retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(0)))
	_, err := p.Do(context.Background(), flaky(5, errUnavailable))
	fmt.Println(err)
	var e *retry.Error
	fmt.Println(errors.As(err, &e), e.Attempts, errors.Is(err, errUnavailable))
	// Output:
	// attempt 1 failed
	// attempt 2 failed
	// retry: gave up after 2 attempts: 503 service unavailable
	// true 2 true
}

func ExampleWithMaxElapsed() {
	p := retry.New[string](append(fakeWaits(nil),
		retry.WithAttempts(resilience.Off), // no limit but time
		retry.WithMaxElapsed(time.Second),
		retry.WithBackoff(backoff.Constant(400*time.Millisecond)),
	)...)
	_, err := p.Do(context.Background(), flaky(10, errUnavailable))
	fmt.Println(err)
	// Output:
	// attempt 1 failed
	// attempt 2 failed
	// attempt 3 failed
	// retry: gave up after 3 attempts (a wait of 400ms would pass MaxElapsed 1s): 503 service unavailable
}

func ExampleWithBackoff() {
	p := retry.New[string](append(fakeWaits(func(_ int, _ error, delay time.Duration) {
		fmt.Println("waiting", delay)
	}),
		retry.WithAttempts(4),
		retry.WithBackoff(backoff.Exponential(100*time.Millisecond, 2, time.Second)),
	)...)
	v, _ := p.Do(context.Background(), flaky(3, errUnavailable))
	fmt.Println(v)
	// Output:
	// attempt 1 failed
	// waiting 100ms
	// attempt 2 failed
	// waiting 200ms
	// attempt 3 failed
	// waiting 400ms
	// attempt 4 succeeded
	// ok
}

// tooMany is an HTTP 429 whose Retry-After header asks for a wait.
type tooMany struct{ after time.Duration }

func (e tooMany) Error() string             { return "429 too many requests" }
func (e tooMany) RetryAfter() time.Duration { return e.after }

func ExampleWithMaxWait() {
	// The dependency asks for 16m40s, more than the default MaxWait (10 s):
	// the policy gives up at once rather than sleep that long.
	p := retry.New[string]()
	_, err := p.Do(context.Background(), flaky(5, tooMany{1000 * time.Second}))
	fmt.Println(err)
	fmt.Println(errors.Is(err, retry.ErrMaxWait))

	// With a longer cap it waits (here on a fake clock).
	p = retry.New[string](append(fakeWaits(func(_ int, _ error, delay time.Duration) {
		fmt.Println("waiting", delay)
	}), retry.WithMaxWait(time.Hour))...)
	v, _ := p.Do(context.Background(), flaky(1, tooMany{1000 * time.Second}))
	fmt.Println(v)
	// Output:
	// attempt 1 failed
	// retry: gave up after 1 attempt (a Retry-After of 16m40s exceeds MaxWait 10s): 429 too many requests
	// true
	// attempt 1 failed
	// waiting 16m40s
	// attempt 2 succeeded
	// ok
}

func ExampleWithRetryIf() {
	errNotFound := errors.New("404 not found")
	p := retry.New[string](retry.WithBackoff(backoff.Constant(0)), retry.WithRetryIf(func(err error) bool {
		return !errors.Is(err, errNotFound) // a 404 will not change
	}))
	_, err := p.Do(context.Background(), flaky(5, errNotFound))
	fmt.Println(err)
	// Output:
	// attempt 1 failed
	// 404 not found
}

func ExampleWithOnRetry() {
	p := retry.New[string](
		retry.WithBackoff(backoff.Constant(0)), // no wait (rarely wise)
		retry.WithOnRetry(func(attempt int, err error, delay time.Duration) {
			fmt.Printf("attempt %d: %v; retrying in %v\n", attempt, err, delay)
		}),
	)
	_, _ = p.Do(context.Background(), flaky(1, errUnavailable))
	// Output:
	// attempt 1 failed
	// attempt 1: 503 service unavailable; retrying in 0s
	// attempt 2 succeeded
}

func ExampleWithClock() {
	// A fake clock makes waits instant and observable in tests.
	clk := clock.NewFake()
	p := retry.New[string](retry.WithClock(clk), retry.WithBackoff(backoff.Constant(time.Hour)))
	done := make(chan string, 1)
	go func() {
		v, _ := p.Do(context.Background(), flaky(1, errUnavailable))
		done <- v
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := clk.BlockUntil(ctx, 1); err != nil { // the policy is waiting
		fmt.Println("the policy did not wait:", err)
		return
	}
	clk.Advance(time.Hour)
	select {
	case v := <-done:
		fmt.Println(v)
	case <-time.After(10 * time.Second):
		fmt.Println("Do did not return")
	}
	// Output:
	// attempt 1 failed
	// attempt 2 succeeded
	// ok
}

func ExampleWithBudget() {
	// One budget per dependency, shared by every retry policy calling it:
	// here at most one retry per 2 calls, and no floor.
	budget := retry.NewBudget(retry.BudgetConfig{Ratio: 0.5, MinPerSecond: resilience.Off})
	p := retry.New[string](append(fakeWaits(nil), retry.WithBudget(budget))...)
	for range 2 {
		_, err := p.Do(context.Background(), flaky(1, errUnavailable))
		fmt.Println("budget exhausted:", errors.Is(err, retry.ErrBudgetExhausted))
	}
	// Output:
	// attempt 1 failed
	// budget exhausted: true
	// attempt 1 failed
	// attempt 2 succeeded
	// budget exhausted: false
}

func ExampleWithConfig() {
	// WithConfig sets only the fields its Config has: the attempts here;
	// the backoff of the option before it stays.
	c := retry.Config{Attempts: 4}
	p := retry.New[string](append(fakeWaits(func(_ int, _ error, delay time.Duration) {
		fmt.Println("waiting", delay)
	}),
		retry.WithBackoff(backoff.Constant(50*time.Millisecond)),
		retry.WithConfig(c),
	)...)
	v, _ := p.Do(context.Background(), flaky(3, errUnavailable))
	fmt.Println(v)
	// Output:
	// attempt 1 failed
	// waiting 50ms
	// attempt 2 failed
	// waiting 50ms
	// attempt 3 failed
	// waiting 50ms
	// attempt 4 succeeded
	// ok
}

// A configuration file: decode it into a Config (absent fields keep their
// defaults), check it, and build the policy from it.
func ExampleConfig_json() {
	const file = `{
		"Attempts": 4,
		"MaxElapsed": "2s",
		"Backoff": {"Kind": "constant", "Base": "300ms"}
	}`
	var c retry.Config
	if err := json.Unmarshal([]byte(file), &c); err != nil {
		fmt.Println(err)
		return
	}
	if err := c.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	out, _ := json.Marshal(c)
	fmt.Println(string(out))

	p := retry.New[string](append(fakeWaits(nil), retry.WithConfig(c))...)
	_, err := p.Do(context.Background(), flaky(10, errUnavailable))
	fmt.Println(err)
	// Output:
	// {"Attempts":4,"MaxElapsed":"2s","Backoff":{"Kind":"constant","Base":"300ms"}}
	// attempt 1 failed
	// attempt 2 failed
	// attempt 3 failed
	// attempt 4 failed
	// retry: gave up after 4 attempts: 503 service unavailable
}

func ExampleNew_permanent() {
	// An error marked resilience.Permanent comes back at once, as it is.
	errBadRequest := errors.New("400 bad request")
	p := retry.New[string]()
	_, err := p.Do(context.Background(), func(context.Context) (string, error) {
		fmt.Println("attempt")
		return "", resilience.Permanent(errBadRequest) // retrying will not help
	})
	fmt.Println(err, errors.Is(err, errBadRequest))
	// Output:
	// attempt
	// 400 bad request true
}

func ExampleError() {
	ctx, cancel := context.WithCancel(context.Background())
	p := retry.New[string]()
	_, err := p.Do(ctx, func(context.Context) (string, error) {
		cancel() // the caller gives up during the attempt
		return "", errUnavailable
	})
	fmt.Println(err)
	fmt.Println(errors.Is(err, context.Canceled), errors.Is(err, errUnavailable))
	// Output:
	// retry: gave up after 1 attempt (context canceled): 503 service unavailable
	// true true
}

func ExampleError_reason() {
	// Why did the policy give up? Compare Reason with the sentinels.
	explain := func(err error) string {
		var re *retry.Error
		if !errors.As(err, &re) {
			return "not retried: " + err.Error()
		}
		switch re.Reason {
		case retry.ErrAttempts:
			return "out of attempts"
		case retry.ErrMaxElapsed:
			return "out of time (MaxElapsed)"
		case retry.ErrMaxWait:
			return "asked to wait too long (MaxWait)"
		case retry.ErrBudgetExhausted:
			return "over the retry budget"
		case context.DeadlineExceeded:
			return "out of time (the caller's deadline)"
		}
		return "the caller gave up"
	}
	fail := func(context.Context) (string, error) { return "", errUnavailable }

	_, err := retry.New[string](retry.WithAttempts(1)).Do(context.Background(), fail)
	fmt.Println(explain(err))

	// The first wait, 1s, would not end before the caller's deadline: the
	// policy stops at once instead of sleeping into it.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err = retry.New[string](retry.WithBackoff(backoff.Constant(time.Second))).Do(ctx, fail)
	fmt.Println(explain(err))
	// Output:
	// out of attempts
	// out of time (the caller's deadline)
}

func ExampleNewBudget() {
	// The defaults, Finagle's: retries up to 20% of the calls of the last
	// 10 s, plus 10 retries per second.
	budget := retry.NewBudget(retry.BudgetConfig{})
	payments := retry.New[string](retry.WithBudget(budget))
	refunds := retry.New[int](retry.WithBudget(budget)) // same dependency, same budget
	fmt.Println(payments, refunds)
	// Output:
	// retry retry
}

func ExampleBudgetConfig_Validate() {
	fmt.Println(retry.BudgetConfig{Ratio: 0.1}.Validate()) // the rest: defaults
	fmt.Println(retry.BudgetConfig{Window: -time.Second}.Validate())
	// Output:
	// <nil>
	// retry: BudgetConfig.Window must be > 0, or 0 (the default, 10s), got -1s
}

// A budget read from a configuration file: Window as a Go duration, Off as
// -1; absent fields keep their defaults.
func ExampleBudgetConfig_json() {
	var c retry.BudgetConfig
	if err := json.Unmarshal([]byte(`{"Ratio": 0.1, "MinPerSecond": -1, "Window": "1m"}`), &c); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Validate(), c.Ratio, c.MinPerSecond == resilience.Off, c.Window)
	budget := retry.NewBudget(c)
	fmt.Println(retry.New[string](retry.WithBudget(budget)))
	// Output:
	// <nil> 0.1 true 1m0s
	// retry
}

// A configuration read at run time: decode it, and check it before building
// the policy (New would panic with the same message).
func ExampleConfig_Validate() {
	for _, js := range []string{`{}`, `{"Attempts": 5}`, `{"Attempts": -1}`, `{"MaxElapsed": "-1s"}`} {
		var c retry.Config
		if err := json.Unmarshal([]byte(js), &c); err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(c.Validate())
	}
	// Output:
	// <nil>
	// <nil>
	// retry: Attempts Off (no limit) needs a MaxElapsed > 0, got 0s
	// retry: MaxElapsed must be >= 0 (0: no bound), got -1s
}

// An observer sees each failed attempt, each wait and the give-up, with
// the policy's name (and the duration of each attempt and call, left out
// here); a Counter counts them for an exporter.
func ExampleWithObserver() {
	var counts telemetry.Counter
	print := telemetry.ObserverFunc(func(e telemetry.Event) {
		if w := e.Type.What(); w == telemetry.WhatCall || w == telemetry.WhatAttempt {
			return // the durations (retry.attempt, retry.call), left out here
		}
		fmt.Printf("%s %s attempt=%d err=%v wait=%v\n", e.Type, e.Name, e.Attempt, e.Err, e.Wait)
	})
	p := retry.New[string](append(fakeWaits(nil),
		retry.WithName("prices"),
		retry.WithAttempts(2),
		retry.WithBackoff(backoff.Constant(time.Second)),
		retry.WithObserver(telemetry.Multi(print, &counts)),
	)...)
	_, _ = p.Do(context.Background(), flaky(5, errUnavailable))
	fmt.Println("gave up:", counts.Count("prices", retry.EventGaveUp))
	// Output:
	// attempt 1 failed
	// retry.attempt_failed prices attempt=1 err=503 service unavailable wait=0s
	// retry.waiting prices attempt=1 err=503 service unavailable wait=1s
	// attempt 2 failed
	// retry.attempt_failed prices attempt=2 err=503 service unavailable wait=0s
	// retry.gave_up prices attempt=2 err=retry: attempts used up wait=0s
	// gave up: 1
}

// A name shows in the layer's name, in the chain, and in the events.
func ExampleWithName() {
	p := retry.New[string](retry.WithName("prices"))
	fmt.Println(p)
	// Output:
	// retry(prices)
}
