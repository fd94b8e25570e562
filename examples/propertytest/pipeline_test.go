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

// TestInventoryPolicy checks, against a dependency that is down (it fails,
// or hangs until the caller gives up), with random pauses between calls and
// random deadlines, that no more than `threshold` calls, and one trial per
// cooldown since, reach the dependency, and that no caller waits past its
// deadline. Each check runs in a synctest bubble: minutes of backoffs,
// cooldowns and deadlines take no real time.
func TestInventoryPolicy(t *testing.T) {
	rapidgen.CheckInBubble(t, func(t *rapid.T) {
		p, _ := NewInventoryPolicy(clock.Real())
		down := []resiliencetest.Fault{resiliencetest.Fail(nil), resiliencetest.Hang()}
		dep := resiliencetest.NewDependency(7, rapid.SampledFrom(down).Draw(t, "down"))
		pauses := rapid.SliceOfN(rapidgen.Duration(0, 15*time.Second), 1, 30).Draw(t, "pauses")
		start := time.Now()
		for i, pause := range pauses {
			time.Sleep(pause)
			deadline := rapidgen.Duration(time.Millisecond, 2*time.Second).Draw(t, "deadline")
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			called := time.Now()
			_, _ = p.Do(ctx, dep.Call)
			cancel()
			if waited := time.Since(called); waited > deadline {
				t.Fatalf("call %d waited %v, past its deadline %v", i, waited, deadline)
			}
			if n, most := dep.Calls(), threshold+int64(time.Since(start)/cooldown); n > most {
				t.Fatalf("call %d: %d calls reached the dependency, want <= %d", i, n, most)
			}
		}
	})
}

// TestInventoryBreaker checks the breaker's part, on a clock.Fake that
// resiliencetest.Drive moves, against a dependency that fails, slows down
// and asks to come back later as a random timeline says, with random pauses
// between calls: no call makes more than `attempts` attempts; no attempt
// reaches the dependency while the breaker is open; `threshold` failed
// attempts in a row leave it open; a call that never reached the dependency
// was refused by the open breaker, and came less than a cooldown after the
// call before.
func TestInventoryBreaker(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		fake := clock.NewFake()
		p, b := NewInventoryPolicy(fake)
		outage := rapidgen.Timeline(fake, 2*time.Minute).Draw(t, "outage")
		made, inARow, whileOpen := 0, 0, false
		dep := resiliencetest.NewDependency(7, resiliencetest.Func("watched outage",
			func(ctx context.Context) error {
				made++
				whileOpen = whileOpen || b.State() == breaker.Open
				err := outage.Inject(ctx)
				if err != nil {
					inARow++
				} else {
					inARow = 0
				}
				return err
			}))
		pauses := rapid.SliceOfN(rapidgen.Duration(0, 15*time.Second), 1, 30).Draw(t, "pauses")
		for i, pause := range pauses {
			fake.Advance(pause)
			made = 0
			var err error
			stuck := resiliencetest.Drive(fake, retryWait, func() {
				_, err = p.Do(context.Background(), dep.Call)
			})
			refused := made == 0 && errors.Is(err, breaker.ErrOpen) && pause < cooldown
			switch {
			case stuck != nil:
				t.Fatalf("call %d: %v", i, stuck)
			case made > attempts:
				t.Fatalf("call %d: %d attempts, want at most %d", i, made, attempts)
			case whileOpen:
				t.Fatalf("call %d: an attempt reached the dependency while the breaker was open", i)
			case inARow >= threshold && b.State() != breaker.Open:
				t.Fatalf("call %d: %d failures in a row, breaker %v", i, inARow, b.State())
			case made == 0 && !refused:
				t.Fatalf("call %d after a pause of %v: no attempt, err %v", i, pause, err)
			}
		}
	})
}
