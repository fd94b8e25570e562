package breaker_test

import (
	"context"
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
