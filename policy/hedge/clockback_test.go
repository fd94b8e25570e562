package hedge_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/hedge"
)

// A hint holds back the one attempt after it: once waited out, it holds
// back no later attempt, even if the clock is then set back before the
// time it named (a wall clock stepped back). A later failure without a hint
// starts the next attempt at once.
func TestHintWaitedOutHoldsNoLaterAttempt(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		clk := clock.NewFake()
		t0 := clk.Now()
		p := hedge.New[int](50*ms, hedge.WithMaxHedges(2), hedge.WithClock(clk))
		var mu sync.Mutex
		n := 0
		fail := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = p.Do(context.Background(), func(ctx context.Context) (int, error) {
				mu.Lock()
				n++
				i := n
				mu.Unlock()
				switch i {
				case 1:
					return 0, pushback{30 * ms} // the next attempt waits 30ms
				case 2:
					<-fail
					return 0, errB // no hint: the third starts at once
				}
				return 3, nil
			})
		}()
		synctest.Wait()
		clk.Advance(30 * ms) // the hint is waited out: the second attempt starts
		synctest.Wait()
		clk.Set(t0) // the clock steps back before the hint's end
		close(fail)
		synctest.Wait()
		mu.Lock()
		started := n
		mu.Unlock()
		if started != 3 {
			t.Errorf("%d attempts started after the second failed, want 3: the waited-out hint held the third back", started)
		}
		clk.Advance(30 * ms) // lets a held-back attempt go, so that Do returns
		<-done
	})
}
