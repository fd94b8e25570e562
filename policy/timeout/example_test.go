package timeout_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/telemetry"
)

// slowQuote is a slow op that honours its context: it returns when its
// context ends.
func slowQuote(ctx context.Context) (float64, error) {
	<-ctx.Done()
	return 0, ctx.Err()
}

// expire runs p.Do(op) in a goroutine and moves clk past d once the policy
// has armed its deadline, so that the example takes no real time. It panics
// if a step does not happen within 2 s (on the real clock): an example
// never hangs.
func expire[T any](clk *clock.Fake, d time.Duration, do func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result)
	go func() {
		v, err := do()
		ch <- result{v, err}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if clk.BlockUntil(ctx, 1) != nil {
		panic("example: no deadline armed within 2s")
	}
	clk.Advance(d)
	r := await(ctx, ch, "Do to return")
	return r.v, r.err
}

// await receives from ch, or panics naming what it waited for once ctx
// ends.
func await[V any](ctx context.Context, ch <-chan V, what string) V {
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		panic("example: waited 2s for " + what)
	}
}

func ExampleNew() {
	clk := clock.NewFake() // production code leaves the clock out
	p := timeout.New[float64](2*time.Second, timeout.WithClock(clk))
	fmt.Println(p)

	_, err := expire(clk, 2*time.Second, func() (float64, error) {
		return p.Do(context.Background(), slowQuote)
	})
	fmt.Println(err)
	fmt.Println(errors.Is(err, timeout.ErrTimeout), errors.Is(err, context.DeadlineExceeded))
	// Output:
	// timeout(2s)
	// timeout: call exceeded 2s
	// true true
}

func ExampleNew_callerCancels() {
	// The caller's own cancellation is not a timeout.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := timeout.New[float64](2*time.Second).Do(ctx, slowQuote)
	fmt.Println(err, errors.Is(err, timeout.ErrTimeout))
	// Output:
	// context canceled false
}

func ExampleWithAbandon() {
	clk := clock.NewFake()
	release := make(chan struct{})
	finished := make(chan struct{})
	// An op that ignores its context: WithAbandon(true) returns at the
	// deadline anyway.
	legacy := func(context.Context) (string, error) {
		defer close(finished)
		<-release
		return "late", nil
	}
	p := timeout.New[string](time.Second, timeout.WithAbandon(true), timeout.WithClock(clk))
	v, err := expire(clk, time.Second, func() (string, error) {
		return p.Do(context.Background(), legacy)
	})
	fmt.Printf("%q %v\n", v, err)
	close(release) // the op returns on its own later; its result is dropped
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	await(ctx, finished, "the abandoned op to return")
	// Output:
	// "" timeout: call exceeded 1s
}

func ExampleWithObserver() {
	clk := clock.NewFake()
	// Any telemetry.Observer: a Counter for exporters, a telemetry.Slog
	// for logs; here a function that prints each event.
	obs := telemetry.ObserverFunc(func(e telemetry.Event) {
		fmt.Println(e.Type, e.Name, e.Elapsed)
	})
	p := timeout.New[float64](2*time.Second, timeout.WithName("quotes"), timeout.WithObserver(obs), timeout.WithClock(clk))

	// A call in time reports nothing.
	_, _ = p.Do(context.Background(), func(context.Context) (float64, error) { return 9.5, nil })
	_, err := expire(clk, 2*time.Second, func() (float64, error) {
		return p.Do(context.Background(), slowQuote)
	})
	fmt.Println(err)
	// Output:
	// timeout.expired quotes 2s
	// timeout: call exceeded 2s
}

func ExampleWithClock() {
	clk := clock.NewFake()
	p := timeout.New[time.Time](time.Minute, timeout.WithClock(clk))
	deadline, _ := p.Do(context.Background(), func(ctx context.Context) (time.Time, error) {
		d, _ := ctx.Deadline() // on the fake clock
		return d, nil
	})
	fmt.Println(deadline.Sub(clk.Now()))
	// Output:
	// 1m0s
}

func ExampleWithConfig() {
	// A configuration read at run time sets its non-zero fields only: the
	// duration stays New's, and Abandon is set.
	c := timeout.Config{Abandon: true}
	if err := c.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(timeout.New[int](time.Second, timeout.WithConfig(c)))
	// Output:
	// timeout(1s)
}

// A configuration file holds a Config as JSON, durations as Go duration
// strings; decode it, validate it, and build the policy from it.
func ExampleConfig_json() {
	file := []byte(`{"Duration": "750ms", "Abandon": true}`)
	var c timeout.Config
	if err := json.Unmarshal(file, &c); err != nil {
		fmt.Println(err)
		return
	}
	if err := c.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	p := timeout.New[int](time.Second, timeout.WithConfig(c)) // c.Duration replaces 1s
	fmt.Println(p)
	out, _ := json.Marshal(c)
	fmt.Println(string(out))
	// Output:
	// timeout(750ms)
	// {"Duration":"750ms","Abandon":true}
}

func ExampleConfig_Validate() {
	fmt.Println(timeout.Config{}.Validate()) // the default configuration
	fmt.Println(timeout.Config{Duration: -time.Second}.Validate())
	// Output:
	// <nil>
	// timeout: Duration must be > 0, or 0 for New's duration, got -1s
}
