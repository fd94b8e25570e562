package pipeline_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/pipeline"
	"github.com/f0b5b96b/resilience/policy/adaptive"
	"github.com/f0b5b96b/resilience/policy/throttle"
)

// An adaptive limiter and a throttler from a document keep their time on
// the Set's clock: the limiter's queue wait is a timer of that clock, and
// the throttler's window turns with it.
func TestDocumentAdaptiveAndThrottleUseTheSetsClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := clock.NewFake()
		s := pipeline.NewSet[int](pipeline.WithClock(f))
		mustApply(t, s, []byte(`{"guards": {
			"a": {"kind": "adaptive", "config": {"Min": 1, "Max": 1, "Initial": 1, "MaxQueue": 1, "MaxWait": "1s"}},
			"t": {"kind": "throttle", "config": {"Window": "16s"}}}}`))
		a := s.Guard("a").(*adaptive.Limiter)
		held, err := a.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		queued := make(chan error)
		go func() {
			p, err := a.Acquire(context.Background())
			if err == nil {
				p.Done(nil)
			}
			queued <- err
		}()
		synctest.Wait()
		if n := f.Waiters(); n != 1 {
			t.Errorf("adaptive: %d timers of the Set's clock armed for the queued call, want 1", n)
		}
		f.Advance(time.Second)
		if err := <-queued; err == nil {
			t.Error("adaptive: the queued call was admitted, want it refused after MaxWait on the Set's clock")
		}
		held.Done(nil)

		th := s.Guard("t").(*throttle.Throttler)
		p, err := th.Allow()
		if err != nil {
			t.Fatal(err)
		}
		p.Done(nil)
		if got := th.Stats().Requests; got != 1 {
			t.Fatalf("throttle: %d requests in the window, want 1", got)
		}
		f.Advance(32 * time.Second)
		if got := th.Stats().Requests; got != 0 {
			t.Errorf("throttle: %d requests in the window two windows later on the Set's clock, want 0", got)
		}
	})
}
