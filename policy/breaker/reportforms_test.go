package breaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// A success is timed whichever way it is reported: Permit.Done(nil),
// Permit.Report, or a call through Policy; slower than SlowCall, it is
// slow.
func TestSlowSuccessIsSlowHoweverReported(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(resilience.Off), breaker.WithSlowCall(time.Second))
	p, err := b.Allow()
	if err != nil {
		t.Fatal(err)
	}
	f.Advance(2 * time.Second)
	p.Done(nil)
	wantCounts(t, b, breaker.Counts{Calls: 1, Successes: 1, Slow: 1, ConsecutiveSuccesses: 1})

	if _, err := breaker.Policy[int](b).Do(context.Background(), func(context.Context) (int, error) {
		f.Advance(2 * time.Second)
		return 1, nil
	}); err != nil {
		t.Fatal(err)
	}
	wantCounts(t, b, breaker.Counts{Calls: 2, Successes: 2, Slow: 2, ConsecutiveSuccesses: 2})
}
