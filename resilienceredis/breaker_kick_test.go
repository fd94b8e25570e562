package resilienceredis

import (
	"errors"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// kicked reports whether b asked its flusher to send the batch now, and
// takes the request.
func brKicked(b *Breaker) bool {
	select {
	case <-b.kick:
		return true
	default:
		return false
	}
}

// The batch is sent early when it holds MaxBatch outcomes, or when the
// instance's own failures reach Threshold (it holds its calls at once,
// Threshold 1 too); otherwise it waits for the flush interval.
func TestBreakerSendsEarlyAtMaxBatchOrTrip(t *testing.T) {
	b, _ := brFakeBreaker(t, WithThreshold(10), WithMaxBatch(3))
	b.sync()
	succeed(b)
	fail(b)
	if brKicked(b) {
		t.Errorf("a batch of 2 (MaxBatch 3) is sent before the flush interval")
	}
	succeed(b)
	if !brKicked(b) {
		t.Errorf("a batch of 3 (MaxBatch 3) is not sent at once")
	}

	b, _ = brFakeBreaker(t, WithThreshold(1))
	b.sync()
	fail(b)
	if !brKicked(b) {
		t.Errorf("Threshold 1: the instance's failure is not sent at once")
	}
	if err := succeed(b); !errors.Is(err, breaker.ErrOpen) {
		t.Errorf("Threshold 1, after one failure: %v, want ErrOpen (the instance holds)", err)
	}
}

// With the consecutive rule off (Threshold Off), the instance never holds
// its calls on its own failures: only the ratio rules, in Redis, trip.
func TestBreakerThresholdOffNeverHolds(t *testing.T) {
	b, _ := brFakeBreaker(t, WithThreshold(resilience.Off), WithFailureRatio(0.5))
	b.sync()
	for i := range 20 {
		if err := fail(b); err != nil {
			t.Fatalf("failure %d: %v, want admitted", i+1, err)
		}
	}
	if brKicked(b) {
		t.Errorf("Threshold Off: 20 failures sent before the flush interval")
	}
}
