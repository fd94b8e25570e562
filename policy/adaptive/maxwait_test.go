package adaptive_test

import (
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// The shortest MaxWait, 1ns, is a bound like any other: a queued caller
// is refused with ErrQueueTimeout once it has passed, and the refusal, as
// every refusal of a limiter, carries no Retry-After hint.
func TestShortestMaxWait(t *testing.T) {
	bubble(t, func(t *testing.T) {
		lim := adaptive.New(adaptive.WithInitial(1), adaptive.WithMinLimit(1), adaptive.WithMaxLimit(1), adaptive.WithMaxQueue(1),
			adaptive.WithMaxWait(time.Nanosecond))
		hold(t, lim, 1)
		w := queueUp(lim, "w", adaptive.Normal)
		time.Sleep(time.Nanosecond)
		if got := w.state(); got != "adaptive: full, MaxWait spent in the queue" {
			t.Fatalf("after a MaxWait of 1ns: %q, want the queue timeout", got)
		}
		if !errors.Is(w.err, adaptive.ErrQueueTimeout) {
			t.Errorf("%v does not match ErrQueueTimeout", w.err)
		}
		if d, ok := resilience.RetryAfter(w.err); ok {
			t.Errorf("the queue timeout carries a Retry-After hint of %v, want none", d)
		}
		if s := lim.Stats(); s.Queued != 0 || s.Refused != 1 {
			t.Errorf("Stats %+v, want none queued and 1 refused", s)
		}
	})
}
