package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resiliencetest"
	"github.com/f0b5b96b/resilience/resiliencetest/rapidgen"
)

// TestInventoryPolicy checks, against a dependency that fails, slows down
// and asks to come back later as a random timeline says, with random pauses
// between calls, what the service relies on: no call makes more than
// `attempts` attempts; no attempt reaches the dependency while the breaker
// is open; `threshold` failed attempts in a row leave it open; a call that
// never reached the dependency was refused by the open breaker; after a
// pause of at least the cooldown, a call reaches it.
func TestInventoryPolicy(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		fake := clock.NewFake()
		p, b := NewInventoryPolicy(fake)
		outage, whileOpen, inARow, made, err := rapidgen.Timeline(fake, 2*time.Minute).Draw(t, "outage"), false, 0, 0, error(nil)
		dep := resiliencetest.NewDependency(7, resiliencetest.Func("watched outage", func(ctx context.Context) error {
			whileOpen, made = whileOpen || b.State() == breaker.Open, made+1 // an attempt while open; attempts made
			err := outage.Inject(ctx)
			inARow = map[bool]int{true: inARow + 1}[err != nil] // failed attempts in a row
			return err
		}))
		for i, pause := range rapid.SliceOfN(rapidgen.Duration(0, 15*time.Second), 1, 30).Draw(t, "pauses") {
			fake.Advance(pause)
			made, err = 0, nil
			if stuck := resiliencetest.Drive(fake, retryWait, func() { _, err = p.Do(context.Background(), dep.Call) }); stuck != nil || made > attempts || whileOpen || (inARow >= threshold && b.State() != breaker.Open) || (made == 0 && (!errors.Is(err, breaker.ErrOpen) || pause >= cooldown)) {
				t.Fatalf("call %d after a pause of %v: %d attempts (at most %d), %d failed in a row, breaker %v, an attempt while open %v, err %v, %v", i, pause, made, attempts, inARow, b.State(), whileOpen, err, stuck)
			}
		}
	})
}
