package pipeline_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/pipeline"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Every layer and guard of a document that waits or reports does so on
// the Set's clock and to the Set's observer: a call that waits is seen
// waiting on the fake clock (and the bubble's clock, which would be the
// real one, is never needed), and each reports its event.
func TestDocumentLayersUseTheSetsClockAndObserver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := clock.NewFake()
		var mu sync.Mutex
		kinds := map[telemetry.Type]bool{}
		obs := telemetry.ObserverFunc(func(e telemetry.Event) { mu.Lock(); kinds[e.Type] = true; mu.Unlock() })
		s := pipeline.NewSet[int](pipeline.WithClock(f), pipeline.WithObserver(obs))
		mustApply(t, s, []byte(`{
			"guards": {
				"bh": {"kind": "bulkhead", "config": {"MaxConcurrent": 1, "MaxQueue": 1, "MaxWait": "1s"}},
				"lim": {"kind": "ratelimit", "config": {"Rate": 1, "Burst": 1}}},
			"pipelines": {
				"retry": [{"kind": "retry", "config": {"Attempts": 2}}],
				"timeout": [{"kind": "timeout", "config": {"Duration": "1s"}}],
				"hedge": [{"kind": "hedge", "config": {"Delay": "1s"}}],
				"bh": [{"guard": "bh"}],
				"lim": [{"guard": "lim"}]}}`))
		ctx := context.Background()
		errDown := errors.New("down")
		var calls int
		ops := map[string]func(context.Context) (int, error){
			"retry": func(context.Context) (int, error) { // fails once: a backoff wait, then succeeds
				if calls++; calls == 1 {
					return 0, errDown
				}
				return 1, nil
			},
			"timeout": func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() },
			"hedge": func(ctx context.Context) (int, error) { // the first hangs; the hedged copy answers
				mu.Lock()
				calls++
				first := calls == 1
				mu.Unlock()
				if first {
					<-ctx.Done()
					return 0, ctx.Err()
				}
				return 1, nil
			},
		}
		for _, name := range []string{"retry", "timeout", "hedge"} {
			p, _ := s.Current(name)
			calls = 0
			done := make(chan struct{})
			go func() { defer close(done); _, _ = p.Do(ctx, ops[name]) }()
			synctest.Wait()
			if n := f.Waiters(); n == 0 {
				t.Errorf("%s: the call waits on no timer of the Set's clock", name)
			}
			for f.AdvanceNext() {
				synctest.Wait()
			}
			<-done
		}
		// A second call queues behind the first for the bulkhead's one slot,
		// for up to 1s of the Set's clock, and is refused.
		bh, _ := s.Current("bh")
		release := make(chan struct{})
		held := make(chan struct{})
		go func() {
			_, _ = bh.Do(ctx, func(context.Context) (int, error) { <-release; return 1, nil })
			close(held)
		}()
		synctest.Wait()
		queued := make(chan error)
		go func() { _, err := bh.Do(ctx, ops["retry"]); queued <- err }()
		synctest.Wait()
		if n := f.Waiters(); n != 1 {
			t.Errorf("bulkhead: %d timers of the Set's clock armed for the queued call, want 1", n)
		}
		f.AdvanceNext()
		if err := <-queued; err == nil {
			t.Error("bulkhead: the queued call was not refused after its MaxWait on the Set's clock")
		}
		close(release)
		<-held
		// The rate limiter refills on the Set's clock.
		lim, _ := s.Current("lim")
		ok := func(context.Context) (int, error) { return 1, nil }
		if _, err := lim.Do(ctx, ok); err != nil {
			t.Fatalf("ratelimit: first call: %v", err)
		}
		if _, err := lim.Do(ctx, ok); err == nil {
			t.Error("ratelimit: second call at once was not refused")
		}
		f.Advance(1e9)
		if _, err := lim.Do(ctx, ok); err != nil {
			t.Errorf("ratelimit: call a second later on the Set's clock: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, typ := range []telemetry.Type{"retry.attempt_failed", "timeout.expired", "hedge.launched", "bulkhead.refused"} {
			if !kinds[typ] {
				t.Errorf("the Set's observer saw no %s event; it saw %v", typ, kinds)
			}
		}
	})
}
