// Command propertytest is a service's own pipeline, with the property tests
// that prove it: see pipeline_test.go. The tests run the pipeline with
// pgregory.net/rapid against fake dependencies of the fault kit
// (resiliencetest), with random pauses between calls, drawn with the
// generators of resiliencetest/rapidgen, and take no real time however long
// the backoffs, cooldowns and deadlines are. TestInventoryPolicy runs the
// pipeline on the real clock, each check in a testing/synctest bubble
// (rapidgen.CheckInBubble); TestInventoryBreaker runs it on a clock.Fake
// that resiliencetest.Drive moves.
//
// It is a module of its own, as a service using the library would be: it
// needs rapid and the rapidgen module, which the core module does not.
//
//	cd examples/propertytest
//	go test -rapid.checks=1000 -v .
//	go run .
package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
)

// The service's settings for calls to its inventory dependency.
const (
	attempts  = 3                      // per call, the first included
	retryWait = 100 * time.Millisecond // between attempts
	threshold = 5                      // consecutive failures that trip
	cooldown  = 10 * time.Second       // open, before a trial
)

// NewInventoryPolicy is the pipeline under test: retry outside, breaker
// inside, so that every attempt is counted and an open breaker cuts retries
// short. Time comes from clk so that a test can control it.
func NewInventoryPolicy(clk clock.Clock) (resilience.Policy[int], *breaker.Breaker) {
	b := breaker.New(breaker.WithName("inventory"), breaker.WithThreshold(threshold),
		breaker.WithCooldown(cooldown), breaker.WithClock(clk))
	p := resilience.Then(
		retry.New[int](retry.WithAttempts(attempts), retry.WithBackoff(backoff.Constant(retryWait)),
			retry.WithMaxElapsed(time.Second), retry.WithClock(clk)),
		breaker.Policy[int](b),
	)
	return p, b
}

func main() {
	p, b := NewInventoryPolicy(clock.Real())
	calls := 0
	for range 3 {
		_, err := p.Do(context.Background(), func(context.Context) (int, error) {
			calls++
			return 0, errors.New("inventory: connection refused")
		})
		fmt.Printf("call: %v\n  breaker %v after %d attempts in all\n", err, b.State(), calls)
	}
}
