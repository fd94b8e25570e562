package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/chaos"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resiliencetest"
)

var errChaos = errors.New("chaos: injected 503")

// A retry in front of chaos that fails every call: the retry sees the
// injected failures as the dependency's. Switching the injector off
// restores the dependency at once.
func Example() {
	in := chaos.NewInjector(1)
	p := resilience.Then(
		retry.New[string](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0))),
		chaos.Fault[string](in, func(context.Context) error { return errChaos }),
	)
	dep := resiliencetest.NewDependency("ok", resiliencetest.Healthy())
	_, err := p.Do(context.Background(), dep.Call)
	fmt.Println(err, "| calls:", dep.Calls())
	in.Disable()
	v, err := p.Do(context.Background(), dep.Call)
	fmt.Println(v, err, "| calls:", dep.Calls())
	// Output:
	// retry: gave up after 3 attempts: chaos: injected 503 | calls: 0
	// ok <nil> | calls: 1
}

func ExampleNewInjector() {
	// One call in ten gets chaos, drawn from the default random source.
	in := chaos.NewInjector(0.1)
	fmt.Println(in.Enabled(), in.Rate())
	// Output: true 0.1
}

func ExampleInjector_Inject() {
	// Chaos of your own: drop a message now and then.
	in := chaos.NewInjector(1)
	if in.Inject() {
		fmt.Println("message dropped")
	}
	// Output: message dropped
}

func ExampleInjector_Disable() {
	in := chaos.NewInjector(1)
	in.Disable() // until the experiment starts
	fmt.Println(in.Inject(), in.Enabled(), in.Rate())
	// Output: false false 1
}

func ExampleInjector_Enable() {
	in := chaos.NewInjector(1)
	in.Disable()
	in.Enable()
	fmt.Println(in.Inject())
	// Output: true
}

func ExampleInjector_SetRate() {
	in := chaos.NewInjector(0)
	fmt.Println(in.Inject())
	in.SetRate(1) // from a flag, an admin endpoint, a config reload
	fmt.Println(in.Inject())
	// Output:
	// false
	// true
}

func ExampleFault() {
	p := chaos.Fault[int](chaos.NewInjector(1), func(context.Context) error { return errChaos })
	_, err := p.Do(context.Background(), func(context.Context) (int, error) { return 1, nil })
	fmt.Println(p, err)
	// Output: chaos.fault chaos: injected 503
}

func ExampleLatency() {
	fake := clock.NewFake()
	start := fake.Now()
	p := chaos.Latency[int](chaos.NewInjector(1), fake, func() time.Duration { return 2 * time.Second })
	_ = resiliencetest.Drive(fake, time.Second, func() {
		_, _ = p.Do(context.Background(), func(context.Context) (int, error) {
			fmt.Println("called after", fake.Now().Sub(start))
			return 1, nil
		})
	})
	// Output: called after 2s
}

func ExampleResult() {
	p := chaos.Result[string](chaos.NewInjector(1), func(context.Context) (string, error) {
		return "stale price", nil
	})
	v, err := p.Do(context.Background(), func(context.Context) (string, error) { return "fresh price", nil })
	fmt.Println(v, err)
	// Output: stale price <nil>
}
