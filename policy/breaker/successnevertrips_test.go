package breaker_test

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// The trip rules are checked when a failure or a slow call is counted,
// never on a success that is not slow, whichever way it is counted: timed
// or not, in a time-based window or not, reported or recorded, of a
// duration up to exactly SlowCall.
func TestSuccessThatIsNotSlowNeverTrips(t *testing.T) {
	windows := map[string]breaker.Option{
		"count window": breaker.WithWindowCalls(10),
		"time window":  breaker.WithWindowDuration(time.Hour),
	}
	for wname, window := range windows {
		for _, c := range []struct {
			name     string
			slowCall time.Duration // 0: none
			success  func(t *testing.T, b *breaker.Breaker, f *clock.Fake)
		}{
			{"reported, instant", time.Second, func(t *testing.T, b *breaker.Breaker, f *clock.Fake) {
				if err := call(t, b, f, 0, breaker.Success); err != nil {
					t.Fatal(err)
				}
			}},
			{"reported, under SlowCall", time.Second, func(t *testing.T, b *breaker.Breaker, f *clock.Fake) {
				if err := call(t, b, f, time.Second/2, breaker.Success); err != nil {
					t.Fatal(err)
				}
			}},
			{"reported, exactly SlowCall", time.Second, func(t *testing.T, b *breaker.Breaker, f *clock.Fake) {
				if err := call(t, b, f, time.Second, breaker.Success); err != nil {
					t.Fatal(err)
				}
			}},
			{"reported, no SlowCall", 0, func(t *testing.T, b *breaker.Breaker, f *clock.Fake) {
				if err := call(t, b, f, time.Minute, breaker.Success); err != nil {
					t.Fatal(err)
				}
			}},
			{"recorded", time.Second, func(t *testing.T, b *breaker.Breaker, f *clock.Fake) {
				b.Record(false)
			}},
		} {
			t.Run(wname+"/"+c.name, func(t *testing.T) {
				opts := []breaker.Option{window, breaker.WithFailureRatio(0.5), breaker.WithMinCalls(4)}
				if c.slowCall > 0 {
					opts = append(opts, breaker.WithSlowCall(c.slowCall))
				}
				b, f := newFake(opts...)
				f.Advance(time.Hour) // calls start well after the breaker's time 0
				succeed(t, b, f, 1)  // the generation's first success, counted the slow way
				fail(t, b, f, 2)     // below MinCalls: no trip
				c.success(t, b, f)   // 2 of 4 failed: the ratio holds, but a success trips nothing
				wantState(t, b, breaker.Closed)
				wantCounts(t, b, breaker.Counts{Calls: 4, Successes: 2, Failures: 2, FailureRatio: 0.5, ConsecutiveSuccesses: 1})
				fail(t, b, f, 1)
				wantState(t, b, breaker.Open)
			})
		}
	}
}
