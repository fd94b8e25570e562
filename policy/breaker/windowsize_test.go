package breaker_test

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// The window of each configuration: none without a ratio rule, the last
// 100 calls by default with one, and the smallest windows there are (one
// call, one bucket, one nanosecond) work as windows.

// Without a ratio rule there is no window: Counts are since the state
// began, past 100 calls.
func TestNoWindowWithoutARatioRule(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(resilience.Off), breaker.WithSlowCall(time.Second))
	succeed(t, b, f, 150)
	wantCounts(t, b, breaker.Counts{Calls: 150, Successes: 150, ConsecutiveSuccesses: 150})
}

// Either ratio rule alone gets the default window, the last 100 calls.
func TestEachRatioRuleGetsTheDefaultWindow(t *testing.T) {
	for name, o := range map[string]breaker.Option{
		"FailureRatio":  breaker.WithFailureRatio(0.9),
		"SlowCallRatio": breaker.WithSlowCallRatio(0.9),
	} {
		t.Run(name, func(t *testing.T) {
			b, f := newFake(o, breaker.WithSlowCall(time.Second))
			succeed(t, b, f, 150)
			wantCounts(t, b, breaker.Counts{Calls: 100, Successes: 100, ConsecutiveSuccesses: 150})
		})
	}
}

// A count-based window of one call holds the last call; MinCalls defaults
// to 1, the window's size.
func TestWindowOfOneCall(t *testing.T) {
	b, f := newFake(breaker.WithFailureRatio(1), breaker.WithWindowCalls(1))
	succeed(t, b, f, 2)
	wantCounts(t, b, breaker.Counts{Calls: 1, Successes: 1, ConsecutiveSuccesses: 2})
	fail(t, b, f, 1)
	wantState(t, b, breaker.Open)
}

// A time-based window of one bucket holds the calls of the current bucket.
func TestTimeWindowOfOneBucket(t *testing.T) {
	b, f := newFake(breaker.WithFailureRatio(0.5), breaker.WithMinCalls(2),
		breaker.WithWindowDuration(time.Minute), breaker.WithWindowBuckets(1),
		breaker.WithSlowCall(time.Second))
	succeed(t, b, f, 1)
	wantCounts(t, b, breaker.Counts{Calls: 1, Successes: 1, ConsecutiveSuccesses: 1})
	f.Advance(time.Minute)
	wantCounts(t, b, breaker.Counts{ConsecutiveSuccesses: 1})
	if err := call(t, b, f, 2*time.Second, breaker.Success); err != nil { // slow
		t.Fatal(err)
	}
	wantCounts(t, b, breaker.Counts{Calls: 1, Successes: 1, Slow: 1, ConsecutiveSuccesses: 2})
	f.Advance(time.Minute)
	fail(t, b, f, 1)
	wantCounts(t, b, breaker.Counts{Calls: 1, Failures: 1, FailureRatio: 1, ConsecutiveFailures: 1})
	succeed(t, b, f, 1)
	fail(t, b, f, 1) // 2 of 3 in the bucket
	wantState(t, b, breaker.Open)
}

// The shortest time-based window, 1ns in one bucket, holds the calls of
// one nanosecond.
func TestTimeWindowOfOneNanosecond(t *testing.T) {
	b, f := newFake(breaker.WithFailureRatio(0.5),
		breaker.WithWindowDuration(time.Nanosecond), breaker.WithWindowBuckets(1))
	succeed(t, b, f, 3)
	wantCounts(t, b, breaker.Counts{Calls: 3, Successes: 3, ConsecutiveSuccesses: 3})
	f.Advance(time.Nanosecond)
	wantCounts(t, b, breaker.Counts{ConsecutiveSuccesses: 3})
}

// A window, count-based or time-based, starts empty at every transition:
// the calls that tripped the breaker are not in the window of the closed
// state after it, even within the window's duration or size.
func TestWindowStartsEmptyAfterATransition(t *testing.T) {
	for name, window := range map[string]breaker.Option{
		"count window": breaker.WithWindowCalls(100),
		"time window":  breaker.WithWindowDuration(time.Hour),
	} {
		t.Run(name, func(t *testing.T) {
			b, f := newFake(window, breaker.WithFailureRatio(0.5), breaker.WithMinCalls(4),
				breaker.WithCooldown(time.Minute), breaker.WithSlowCall(time.Second))
			succeed(t, b, f, 1)
			for range 3 { // slow failures: 3 of 4
				if err := call(t, b, f, 2*time.Second, breaker.Failure); err != nil {
					t.Fatal(err)
				}
			}
			wantState(t, b, breaker.Open)
			f.Advance(time.Minute)
			succeed(t, b, f, 1) // the trial closes it
			wantState(t, b, breaker.Closed)
			wantCounts(t, b, breaker.Counts{})
			fail(t, b, f, 1)
			succeed(t, b, f, 1)
			wantCounts(t, b, breaker.Counts{Calls: 2, Successes: 1, Failures: 1, FailureRatio: 0.5, ConsecutiveSuccesses: 1})
		})
	}
}
