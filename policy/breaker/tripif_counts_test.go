package breaker_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// With no ratio rule and no window, the counts TripIf sees are those since
// the breaker closed (Config's doc), not the last 100 calls of the window a
// ratio rule would have: after 150 successes and a failure, TripIf (asked
// on failures) sees 151 calls.
func TestTripIfAloneSeesTheCountsSinceClosed(t *testing.T) {
	var seen []breaker.Counts
	b, f := newFake(breaker.WithThreshold(resilience.Off), breaker.WithTripIf(func(c breaker.Counts) bool {
		seen = append(seen, c)
		return false
	}))
	succeed(t, b, f, 150)
	fail(t, b, f, 1)
	want := []breaker.Counts{{Calls: 151, Successes: 150, Failures: 1, FailureRatio: 1.0 / 151, ConsecutiveFailures: 1}}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("counts seen by TripIf mismatch (-want +got):\n%s", diff)
	}
}
