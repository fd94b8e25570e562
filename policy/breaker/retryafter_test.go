package breaker_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// A refusal's RetryAfter is the time left rounded up to a whole
// millisecond, up to the longest cooldown there is: a wait that cannot be
// rounded up without overflowing stays as it is.
func TestRetryAfterOfTheLongestCooldowns(t *testing.T) {
	const maxD = time.Duration(math.MaxInt64)
	for _, c := range []struct {
		cooldown, want time.Duration
	}{
		{maxD - time.Millisecond, maxD - maxD%time.Millisecond}, // rounded up: the last whole millisecond
		{maxD - time.Millisecond + 1, maxD - time.Millisecond + 1},
		{maxD, maxD},
	} {
		b, _ := newFake(breaker.WithThreshold(1), breaker.WithCooldown(c.cooldown))
		b.Record(true)
		_, err := b.Allow()
		var r *resilience.RefusedError
		if !errors.As(err, &r) || !errors.Is(err, breaker.ErrOpen) {
			t.Fatalf("Allow() = %v, want an ErrOpen refusal", err)
		}
		if got := r.RetryAfter(); got != c.want {
			t.Errorf("cooldown %d: RetryAfter() = %d, want %d", c.cooldown, got, c.want)
		}
	}
}
