package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// patience bounds drive: a call that neither returns nor waits on the fake
// clock for this long is stuck, and the test fails saying so instead of
// hanging until go test's limit.
const patience = 10 * time.Second

// drive runs call while advancing fake by step each time call blocks on the
// fake clock (a retry waiting out its backoff), and returns what call
// returned. No wall-clock waiting: BlockUntil wakes as soon as a timer is
// armed. If call does neither for patience, drive fails t.
func drive(t *rapid.T, fake *clock.Fake, step time.Duration, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	stuck := time.NewTimer(patience)
	defer stuck.Stop()
	for {
		ctx, cancel := context.WithCancel(context.Background())
		blocked := make(chan error, 1)
		go func() { blocked <- fake.BlockUntil(ctx, 1) }()
		select {
		case err := <-done:
			cancel()
			<-blocked
			return err
		case <-blocked:
			cancel()
			fake.Advance(step)
			stuck.Reset(patience)
		case <-stuck.C:
			cancel()
			t.Fatalf("the call neither returned nor waited on the fake clock within %v", patience)
		}
	}
}

// TestInventoryPolicy checks, for random schedules of dependency failures
// and pauses between calls, what the service relies on:
//
//   - no call makes more than `attempts` attempts;
//   - no attempt reaches the dependency while the breaker is open;
//   - the breaker opens when `threshold` attempts in a row have failed, or
//     when a half-open trial fails, and otherwise stays (or becomes) closed;
//   - a call that never reached the dependency was refused by the open
//     breaker, with breaker.ErrOpen;
//   - after a pause of at least the cooldown, a call reaches the dependency:
//     nothing keeps the service away from a recovered dependency for good.
func TestInventoryPolicy(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		fake := clock.NewFake()
		p, b := NewInventoryPolicy(fake)

		failedInARow := 0 // failed attempts in a row while closed
		for i := range rapid.IntRange(1, 30).Draw(t, "calls") {
			pause := time.Duration(rapid.IntRange(0, 15).Draw(t, "pause seconds")) * time.Second
			fake.Advance(pause)
			failing := rapid.Bool().Draw(t, "dependency failing")

			attemptsMade, tripped, attemptWhileOpen := 0, false, false
			err := drive(t, fake, retryWait, func() error {
				_, err := p.Do(context.Background(), func(context.Context) (int, error) {
					attemptsMade++
					switch st := b.State(); {
					case st == breaker.Open:
						attemptWhileOpen = true // reported below: t.Fatalf must run on the test's goroutine
					case !failing:
						failedInARow, tripped = 0, false
						return 7, nil
					case st == breaker.HalfOpen:
						tripped = true // a failed trial opens it again
					default:
						failedInARow++
						if failedInARow >= threshold {
							failedInARow, tripped = 0, true
						}
					}
					return 0, errors.New("inventory: unavailable")
				})
				return err
			})

			if attemptWhileOpen {
				t.Fatalf("call %d: an attempt reached the dependency while the breaker was open", i)
			}
			if attemptsMade > attempts {
				t.Fatalf("call %d made %d attempts, want at most %d", i, attemptsMade, attempts)
			}
			if pause >= cooldown && attemptsMade == 0 {
				t.Fatalf("call %d after a pause of %v (>= the cooldown) never reached the dependency: %v", i, pause, err)
			}
			want := breaker.Closed
			switch {
			case attemptsMade == 0:
				if !errors.Is(err, breaker.ErrOpen) {
					t.Fatalf("call %d never reached the dependency but failed with %v, want breaker.ErrOpen", i, err)
				}
				want = breaker.Open
			case tripped:
				want = breaker.Open
			}
			if got := b.State(); got != want {
				t.Fatalf("call %d (dependency failing %v, %d attempts): breaker %v, want %v", i, failing, attemptsMade, got, want)
			}
		}
	})
}
