package breaker_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/breaker"
)

// A half-open trial is slow when it took longer than SlowCall (none is
// without SlowCall): a slow trial opens the breaker again, one that took
// SlowCall or less closes it. The transition out of half-open carries the
// trials' counts, slow ones included.
func TestTrialSlowness(t *testing.T) {
	for _, c := range []struct {
		name     string
		slowCall time.Duration // 0: none
		took     time.Duration
		o        breaker.Outcome
		to       breaker.State
		counts   breaker.Counts
	}{
		{"no SlowCall", 0, time.Hour, breaker.Success, breaker.Closed,
			breaker.Counts{Calls: 1, Successes: 1, ConsecutiveSuccesses: 1}},
		{"exactly SlowCall", time.Second, time.Second, breaker.Success, breaker.Closed,
			breaker.Counts{Calls: 1, Successes: 1, ConsecutiveSuccesses: 1}},
		{"slow", time.Second, time.Second + 1, breaker.Success, breaker.Open,
			breaker.Counts{Calls: 1, Successes: 1, Slow: 1, ConsecutiveSuccesses: 1}},
		{"slow at 1ns", time.Nanosecond, 2 * time.Nanosecond, breaker.Success, breaker.Open,
			breaker.Counts{Calls: 1, Successes: 1, Slow: 1, ConsecutiveSuccesses: 1}},
		{"slow failure", time.Second, 2 * time.Second, breaker.Failure, breaker.Open,
			breaker.Counts{Calls: 1, Failures: 1, Slow: 1, FailureRatio: 1, ConsecutiveFailures: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []breaker.Transition
			opts := []breaker.Option{breaker.WithThreshold(1), breaker.WithCooldown(time.Minute),
				breaker.WithTrialTimeout(2 * time.Hour),
				breaker.WithOnStateChange(func(tr breaker.Transition) { got = append(got, tr) })}
			if c.slowCall > 0 {
				opts = append(opts, breaker.WithSlowCall(c.slowCall))
			}
			b, f := newFake(opts...)
			f.Advance(time.Hour) // the trial's start is well after the breaker's time 0
			b.Record(true)
			f.Advance(time.Minute)
			if err := call(t, b, f, c.took, c.o); err != nil {
				t.Fatalf("Allow() after the cooldown = %v, want a trial", err)
			}
			wantState(t, b, c.to)
			if len(got) != 3 {
				t.Fatalf("got %d transitions, want 3 (the trip, half-open, the trial's)", len(got))
			}
			last := got[2]
			if last.From != breaker.HalfOpen || last.To != c.to {
				t.Errorf("last transition %v -> %v, want half-open -> %v", last.From, last.To, c.to)
			}
			if diff := cmp.Diff(c.counts, last.Counts); diff != "" {
				t.Errorf("the half-open state's counts: mismatch (-want +got):\n%s", diff)
			}
			if c.to == breaker.Open { // opened for a cooldown, not held open
				f.Advance(time.Minute)
				wantState(t, b, breaker.HalfOpen)
			}
		})
	}
}
