package rapidgen_test

import (
	"context"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencetest"
	"github.com/f0b5b96b/resilience/resiliencetest/rapidgen"
)

// retryOnTheRealClock is a property of a retry > timeout pipeline built on
// the real clock, the default: against a dependency that hangs for its
// first calls, a call takes exactly its timeouts and backoff waits, in the
// bubble's time, and makes at most its attempts. Each check takes up to
// minutes of bubble time, and no real time.
func retryOnTheRealClock(t *testing.T) {
	rapidgen.CheckInBubble(t, func(t *rapid.T) {
		attempts := rapid.IntRange(1, 5).Draw(t, "attempts")
		perTry := rapidgen.Duration(time.Millisecond, time.Minute).Draw(t, "timeout")
		wait := rapidgen.Duration(0, 10*time.Second).Draw(t, "backoff")
		hangs := rapid.IntRange(0, 6).Draw(t, "hangs")
		script := []resiliencetest.Fault{resiliencetest.Healthy()}
		for range hangs {
			script = append([]resiliencetest.Fault{resiliencetest.Hang()}, script...)
		}
		dep := resiliencetest.NewDependency(1, resiliencetest.Sequence(script...))
		p := resilience.Then(
			retry.New[int](retry.WithAttempts(attempts), retry.WithBackoff(backoff.Constant(wait))),
			timeout.New[int](perTry),
		)
		start := time.Now()
		_, err := p.Do(context.Background(), dep.Call)
		calls := min(hangs+1, attempts)
		want := time.Duration(min(hangs, attempts))*perTry + time.Duration(calls-1)*wait
		if got := time.Since(start); got != want || dep.Calls() != int64(calls) || (err == nil) != (hangs < attempts) {
			t.Fatalf("took %v, want %v; %d calls, want %d; err %v", got, want, dep.Calls(), calls, err)
		}
	})
}

// A property runs from a test function:
//
//	func TestRetry(t *testing.T) { retryOnTheRealClock(t) }
func ExampleCheckInBubble() {}
