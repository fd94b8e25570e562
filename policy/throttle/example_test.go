package throttle_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/throttle"
)

// A throttler in front of a dependency that fails every request: after
// the first failures it refuses most requests itself.
func ExampleNew() {
	rng := rand.New(rand.NewPCG(1, 2)) // seeded, so the example's count repeats
	th := throttle.New(throttle.WithName("payments"), throttle.WithClock(clock.NewFake()), throttle.WithRand(rng))
	sent := 0
	for range 1000 {
		p, err := th.Allow()
		if err != nil {
			continue // throttled: the dependency is not called
		}
		sent++
		p.Done(errors.New("503 Service Unavailable"))
	}
	s := th.Stats()
	fmt.Printf("sent %d of 1000; refused %d; probability of a refusal now %.3f\n", sent, s.Refused, s.Probability)
	// Output:
	// sent 46 of 1000; refused 954; probability of a refusal now 0.979
}

// Code that calls the dependency itself asks Allow and reports the outcome
// with Done.
func ExampleThrottler_Allow() {
	th := throttle.New()
	pay := func(ctx context.Context) error {
		p, err := th.Allow()
		if err != nil {
			return err // throttled
		}
		err = nil // the call to the dependency
		p.Done(err)
		return err
	}
	fmt.Println(pay(context.Background()), th.Stats())
	// Output:
	// <nil> {1 1 0 0}
}

// The throttler as a layer of a policy.
func ExamplePolicy() {
	th := throttle.New(throttle.WithName("payments"))
	p := throttle.Policy[string](th)
	fmt.Println(p)
	v, err := p.Do(context.Background(), func(context.Context) (string, error) { return "receipt 42", nil })
	fmt.Println(v, err)
	// Output:
	// throttle(payments)
	// receipt 42 <nil>
}

// With K 1, the throttler sends only as many requests as the dependency
// accepts: with one in two failing, it refuses about half of them, with
// probability (requests − K·accepts) / (requests + 1) = (100 − 50) / 101.
func ExampleWithK() {
	th := throttle.New(throttle.WithK(1), throttle.WithClock(clock.NewFake()), throttle.WithRandom(func() float64 { return 1 }))
	for i := range 100 {
		p, err := th.Allow()
		if err != nil {
			continue // refused: nothing was sent, there is nothing to report
		}
		if i%2 == 0 {
			p.Done(nil)
		} else {
			p.Done(errors.New("503"))
		}
	}
	fmt.Printf("%.3f\n", th.Stats().Probability)
	// Output:
	// 0.495
}

// Refusals are *resilience.RefusedError values matching ErrThrottled.
func ExampleErrThrottled() {
	th := throttle.New(throttle.WithName("payments"), throttle.WithClock(clock.NewFake()), throttle.WithRandom(func() float64 { return 0 }))
	p, _ := th.Allow()
	p.Done(errors.New("503"))
	_, err := th.Allow()
	fmt.Println(err)
	fmt.Println(errors.Is(err, throttle.ErrThrottled), errors.Is(err, resilience.ErrRefused))
	// Output:
	// throttle: throttled (payments)
	// true true
}

// A configuration read from a JSON file, checked, and given to New.
func ExampleConfig_json() {
	b, err := os.ReadFile("testdata/config.json")
	if err != nil {
		panic(err)
	}
	var c throttle.Config
	if err := json.Unmarshal(b, &c); err != nil {
		panic(err)
	}
	if err := c.Validate(); err != nil {
		panic(err)
	}
	fmt.Println(throttle.Policy[int](throttle.New(throttle.WithConfig(c))))
	// Output:
	// throttle(payments)
}
