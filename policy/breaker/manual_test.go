package breaker_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/breaker"
)

// A manual control (ForceOpen, ForceClosed, Reset) made after a transition
// became due makes that transition first, at the instant it became due:
// the callback sees the breaker turn half-open at the cooldown's end, then
// the control's transition from half-open.
func TestManualControlMakesTheDueTransitionFirst(t *testing.T) {
	for name, control := range map[string]func(*breaker.Breaker){
		"ForceOpen":   (*breaker.Breaker).ForceOpen,
		"ForceClosed": (*breaker.Breaker).ForceClosed,
		"Reset":       (*breaker.Breaker).Reset,
	} {
		t.Run(name, func(t *testing.T) {
			type step struct {
				From, To breaker.State
				At       time.Duration
			}
			var got []step
			var f0 time.Time
			b, f := newFake(breaker.WithThreshold(1), breaker.WithCooldown(time.Minute),
				breaker.WithOnStateChange(func(tr breaker.Transition) {
					got = append(got, step{tr.From, tr.To, tr.At.Sub(f0)})
				}))
			f0 = f.Now()
			b.Record(true)
			f.Advance(time.Hour)
			control(b)
			to := breaker.Closed
			if name == "ForceOpen" {
				to = breaker.Open
			}
			want := []step{
				{breaker.Closed, breaker.Open, 0},
				{breaker.Open, breaker.HalfOpen, time.Minute},
				{breaker.HalfOpen, to, time.Hour},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("transitions mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
