package breaker_test

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
)

// In a time-based window a slow call is a call like any other: a slow
// success counts among the window's successes (and its calls), not only
// among its slow calls, so the slow-call ratio is of all the calls in the
// window.
func TestTimeWindowCountsSlowSuccesses(t *testing.T) {
	b, f := newFake(breaker.WithSlowCallRatio(0.5), breaker.WithSlowCall(time.Second),
		breaker.WithWindowDuration(time.Minute), breaker.WithMinCalls(3))
	mustCall := func(d time.Duration, o breaker.Outcome) {
		t.Helper()
		if err := call(t, b, f, d, o); err != nil {
			t.Fatal(err)
		}
	}
	mustCall(2*time.Second, breaker.Success) // slow
	mustCall(0, breaker.Success)
	wantCounts(t, b, breaker.Counts{Calls: 2, Successes: 2, Slow: 1, ConsecutiveSuccesses: 2})
	mustCall(0, breaker.Success)
	mustCall(0, breaker.Success)
	mustCall(2*time.Second, breaker.Success) // slow: 2 of 5, below the ratio
	wantCounts(t, b, breaker.Counts{Calls: 5, Successes: 5, Slow: 2, ConsecutiveSuccesses: 5})
	wantState(t, b, breaker.Closed)
	mustCall(2*time.Second, breaker.Success) // 3 of 6: trips
	wantState(t, b, breaker.Open)
}
