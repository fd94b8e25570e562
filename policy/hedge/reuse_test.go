package hedge_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/hedge"
)

// A call whose first attempt answers before the delay allocates only its
// cancellable context (context.WithCancel: the context and its cancel
// func): the record of the race, its timer and the timer's callback are
// kept from an earlier such call.
func TestCallWithoutHedgeAllocatesOnlyItsContext(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop kept values")
	}
	p := hedge.New[int](time.Second)
	ctx := context.Background()
	op := func(context.Context) (int, error) { return 1, nil }
	var failed error
	allocs := testing.AllocsPerRun(200, func() {
		if v, err := p.Do(ctx, op); v != 1 || err != nil {
			failed = fmt.Errorf("Do = %d, %v; want 1, nil", v, err)
		}
	})
	if failed != nil {
		t.Fatal(failed)
	}
	if allocs > 2 {
		t.Errorf("a call without a hedge allocates %v times, want at most 2 (context.WithCancel's)", allocs)
	}
}

// A kept record's timer is re-armed for the next call: calls that answer at
// once, alternating with calls that hedge, each start their hedge one
// delay after they start, and leave no timer armed.
func TestKeptRecordRearmsItsTimer(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		clk := clock.NewFake()
		p := hedge.New[int](50*ms, hedge.WithClock(clk))
		for i := range 6 {
			slow := i%2 == 1
			var (
				mu      sync.Mutex
				started []time.Duration
			)
			start := clk.Now()
			done := make(chan struct{})
			var v int
			var err error
			go func() {
				defer close(done)
				v, err = p.Do(context.Background(), func(ctx context.Context) (int, error) {
					mu.Lock()
					n := len(started)
					started = append(started, clk.Now().Sub(start))
					mu.Unlock()
					if slow && n == 0 {
						<-ctx.Done() // the first attempt waits for the hedge to win
						return 0, ctx.Err()
					}
					return 10 + n, nil
				})
			}()
			synctest.Wait()
			want := []time.Duration{0}
			if slow {
				clk.Advance(50 * ms)
				synctest.Wait()
				want = []time.Duration{0, 50 * ms}
			}
			<-done
			wantV := 10
			if slow {
				wantV = 11
			}
			if v != wantV || err != nil {
				t.Errorf("call %d: Do = %d, %v; want %d, nil", i, v, err, wantV)
			}
			if diff := cmp.Diff(want, started); diff != "" {
				t.Errorf("call %d: attempt start times mismatch (-want +got):\n%s", i, diff)
			}
			if n := clk.Waiters(); n != 0 {
				t.Errorf("call %d: %d timers left armed", i, n)
			}
		}
	})
}

// Calls from many goroutines at once, some of which hedge, on one policy:
// each gets its own result, whatever records are kept and handed out
// again (run with -race).
func TestKeptRecordsUnderConcurrentCalls(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		p := hedge.New[int](10 * ms)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 50 {
					slow := (g+i)%3 == 0
					want := g*1000 + i
					var attempts sync.Map
					v, err := p.Do(context.Background(), func(ctx context.Context) (int, error) {
						n := 0
						for {
							if _, loaded := attempts.LoadOrStore(n, true); !loaded {
								break
							}
							n++
						}
						if slow && n == 0 {
							select {
							case <-time.After(time.Second):
							case <-ctx.Done():
								return 0, ctx.Err()
							}
						}
						return want, nil
					})
					if v != want || err != nil {
						t.Errorf("goroutine %d call %d: Do = %d, %v; want %d, nil", g, i, v, err, want)
						return
					}
				}
			})
		}
		wg.Wait()
	})
}
