package breaker_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
)

// Every refusal counts once, in Counts.Refused and Stats.Refused, whether
// it reads the clock or shares the last refusal's fresh hint (the real
// clock, here in a synctest bubble), through Allow or through Policy.
func TestRealClockRefusalsCountOnce(t *testing.T) {
	bubble(t, func(t *testing.T) {
		b := breaker.New(breaker.WithThreshold(1), breaker.WithCooldown(time.Second))
		p := breaker.Policy[int](b)
		b.Record(true)
		for i := range 6 {
			if i%2 == 0 {
				if _, err := b.Allow(); err == nil {
					t.Fatal("Allow() admitted a call while open")
				}
			} else if _, err := p.Do(context.Background(), func(context.Context) (int, error) { return 0, nil }); err == nil {
				t.Fatal("Do admitted a call while open")
			}
			time.Sleep(time.Millisecond / 4)
		}
		if got := b.Counts().Refused; got != 6 {
			t.Errorf("Counts().Refused = %d after 6 refusals, want 6", got)
		}
		if got := b.Stats().Refused; got != 6 {
			t.Errorf("Stats().Refused = %d after 6 refusals, want 6", got)
		}
	})
}

// Refusals made at once from several goroutines, sharing the fresh hint
// of the real clock, each count once: a refusal whose count collides with
// another's (its compare-and-swap fails) is counted all the same.
// Collisions need goroutines running at the same instant on different
// cores; where none happens, the test checks the total all the same.
func TestParallelRefusalsCountOnce(t *testing.T) {
	bubble(t, func(t *testing.T) {
		b := breaker.New(breaker.WithThreshold(1), breaker.WithCooldown(time.Minute))
		b.Record(true)
		_, _ = b.Allow() // freshens the hint: the bubble's time stands still meanwhile
		const goroutines, calls = 8, 200000
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				for range calls {
					if _, err := b.Allow(); err == nil {
						t.Error("Allow() admitted a call while open")
						return
					}
				}
			})
		}
		wg.Wait()
		want := uint64(goroutines*calls + 1)
		if got := b.Counts().Refused; got != want {
			t.Errorf("Counts().Refused = %d after %d refusals, want %d", got, want, want)
		}
		if got := b.Stats().Refused; got != want {
			t.Errorf("Stats().Refused = %d after %d refusals, want %d", got, want, want)
		}
		b.Reset() // stops the hint's timer
	})
}
