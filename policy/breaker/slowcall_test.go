package breaker_test

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// A call is slow when it took longer than SlowCall, whatever its outcome
// and however it was reported; a recorded call is never slow.

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

// The shortest SlowCall, 1ns, tells a call of 2ns from one of 1ns.
func TestSlowCallOfOneNanosecond(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(resilience.Off), breaker.WithSlowCall(time.Nanosecond))
	for _, d := range []time.Duration{time.Nanosecond, 2 * time.Nanosecond, 0} {
		if err := call(t, b, f, d, breaker.Success); err != nil {
			t.Fatal(err)
		}
	}
	wantCounts(t, b, breaker.Counts{Calls: 3, Successes: 3, Slow: 1, ConsecutiveSuccesses: 3})
}

// A failure reported with Done (its error classified) is timed like one
// reported with Report: slower than SlowCall, it is slow too.
func TestSlowFailureReportedWithDoneIsSlow(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(resilience.Off), breaker.WithSlowCall(time.Second))
	p, err := b.Allow()
	if err != nil {
		t.Fatal(err)
	}
	f.Advance(2 * time.Second)
	p.Done(errBoom)
	wantCounts(t, b, breaker.Counts{Calls: 1, Failures: 1, Slow: 1, FailureRatio: 1, ConsecutiveFailures: 1})
}

// A call recorded without a permit has no duration: it is never slow,
// however late it is recorded.
func TestRecordedCallIsNeverSlow(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(resilience.Off), breaker.WithSlowCall(time.Second))
	f.Advance(time.Hour)
	b.Record(false)
	b.Record(true)
	wantCounts(t, b, breaker.Counts{Calls: 2, Successes: 1, Failures: 1, FailureRatio: 0.5, ConsecutiveFailures: 1})
}

// A failure is slow only when it took longer than SlowCall: not at exactly
// SlowCall, and never without SlowCall, in a time-based window too.
func TestFailureSlowness(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []breaker.Option
		took time.Duration
		slow uint64
	}{
		{"exactly SlowCall", []breaker.Option{breaker.WithSlowCall(time.Second)}, time.Second, 0},
		{"over SlowCall", []breaker.Option{breaker.WithSlowCall(time.Second)}, time.Second + 1, 1},
		{"no SlowCall, time window", []breaker.Option{breaker.WithWindowDuration(time.Hour), breaker.WithTripIf(func(breaker.Counts) bool { return false })}, time.Minute, 0},
		{"1ns SlowCall", []breaker.Option{breaker.WithSlowCall(time.Nanosecond)}, 2 * time.Nanosecond, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, f := newFake(append([]breaker.Option{breaker.WithThreshold(resilience.Off)}, c.opts...)...)
			f.Advance(time.Hour) // the call's start is well after the breaker's time 0
			if err := call(t, b, f, c.took, breaker.Failure); err != nil {
				t.Fatal(err)
			}
			wantCounts(t, b, breaker.Counts{Calls: 1, Failures: 1, Slow: c.slow, FailureRatio: 1, ConsecutiveFailures: 1})
		})
	}
}
