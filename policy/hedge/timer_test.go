package hedge_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/hedge"
)

// Once the last hedge has started, the call holds no timer: whether the
// timer started it or a failure did, nothing is left to fire while the
// attempts run.
func TestNoTimerArmedAfterTheLastHedge(t *testing.T) {
	for _, failFirst := range []bool{false, true} {
		bubbleWithin(t, func(t *testing.T) {
			clk := clock.NewFake()
			p := hedge.New[int](50*ms, hedge.WithMaxHedges(2), hedge.WithClock(clk))
			var mu sync.Mutex
			n := 0
			release := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = p.Do(context.Background(), func(ctx context.Context) (int, error) {
					mu.Lock()
					n++
					i := n
					mu.Unlock()
					if failFirst && i == 2 {
						return 0, errA // the second attempt fails: the third starts at once
					}
					select {
					case <-release:
						return i, nil
					case <-ctx.Done():
						return 0, ctx.Err()
					}
				})
			}()
			synctest.Wait()
			clk.Advance(50 * ms) // the first hedge
			synctest.Wait()
			if !failFirst {
				clk.Advance(50 * ms) // the second, and last
				synctest.Wait()
			}
			mu.Lock()
			started := n
			mu.Unlock()
			if started != 3 {
				t.Fatalf("failFirst %v: %d attempts started, want 3", failFirst, started)
			}
			if w := clk.Waiters(); w != 0 {
				t.Errorf("failFirst %v: %d timers armed after the last hedge started, want 0", failFirst, w)
			}
			close(release)
			<-done
		})
	}
}

// Once an attempt has won, no attempt starts, even while the call waits
// for a loser that ignores its context.
func TestNoAttemptStartsAfterTheRaceIsWon(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		l := newLog(step{d: 300 * ms, v: 1, stubborn: true}, step{d: 10 * ms, v: 2}, step{d: 10 * ms, v: 3})
		v, err := hedge.New[int](50*ms, hedge.WithMaxHedges(2)).Do(context.Background(), l.op)
		if v != 2 || err != nil {
			t.Errorf("Do = %d, %v; want the hedge's 2, nil", v, err)
		}
		if diff := cmp.Diff([]time.Duration{0, 50 * ms}, l.started); diff != "" {
			t.Errorf("start times mismatch (-want +got):\n%s", diff)
		}
	})
}

// A call that ends without a hedge because its caller gave up leaves no
// timer armed once Do has returned.
func TestCancelledCallLeavesNoTimer(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		clk := clock.NewFake()
		p := hedge.New[int](50*ms, hedge.WithClock(clk))
		ctx, cancel := context.WithCancel(context.Background())
		_, err := p.Do(ctx, func(context.Context) (int, error) {
			cancel() // the caller gives up while the first attempt runs
			return 0, errA
		})
		if err == nil {
			t.Fatal("Do succeeded, want the attempt's failure")
		}
		if w := clk.Waiters(); w != 0 {
			t.Errorf("%d timers armed after Do returned, want 0", w)
		}
	})
}
