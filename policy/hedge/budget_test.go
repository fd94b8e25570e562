package hedge_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/hedge"
)

// A call that finds the budget empty starts no more attempts, even if other
// calls refill the budget before its first attempt fails: the failure then
// ends the call instead of starting a hedge.
func TestSpentBudgetEndsTheCallsHedges(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		p := hedge.New[int](50*ms, hedge.WithMaxHedges(2), hedge.WithBudget(0.1)) // one hedge, full at New
		fast := func(context.Context) (int, error) { return 1, nil }
		n := 0
		failOnce := func(context.Context) (int, error) {
			if n++; n == 1 {
				return 0, errA
			}
			return 2, nil
		}
		if v, err := p.Do(context.Background(), failOnce); v != 2 || err != nil { // takes the budget's hedge
			t.Fatalf("first call: Do = %d, %v; want the hedge's 2, nil", v, err)
		}
		l := newLog(step{d: 100 * ms, err: errA}, step{v: 3})
		done := make(chan error)
		go func() {
			_, err := p.Do(context.Background(), l.op) // its timer finds the budget empty at 50ms
			done <- err
		}()
		time.Sleep(60 * ms)
		for range 12 { // a tenth of a hedge each: the budget is full again
			_, _ = p.Do(context.Background(), fast)
		}
		if err := <-done; !errors.Is(err, errA) {
			t.Errorf("Do = %v, want the first attempt's failure", err)
		}
		if diff := cmp.Diff([]time.Duration{0}, l.started); diff != "" {
			t.Errorf("start times mismatch (-want +got):\n%s", diff)
		}
	})
}
