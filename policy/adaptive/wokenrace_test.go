package adaptive_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// A queued caller handed a slot as its context ends gives the slot on,
// whichever of the two its wait sees first: the next caller is admitted
// and nothing is left held. (Which one it sees is the scheduler's choice:
// the test tries many times.)
func TestAdmittedAsContextEndsAlwaysGivesTheSlotOn(t *testing.T) {
	for i := range 50 {
		bubble(t, func(t *testing.T) {
			lim := adaptive.New(adaptive.WithInitial(1), adaptive.WithMinLimit(1), adaptive.WithMaxLimit(1), adaptive.WithMaxQueue(2))
			first := hold(t, lim, 1)[0]
			ctx, cancel := context.WithCancel(context.Background())
			got := make(chan error, 1)
			go func() {
				p, err := lim.Acquire(ctx)
				if err == nil {
					p.Done(nil)
				}
				got <- err
			}()
			synctest.Wait()
			next := queueUp(lim, "next", adaptive.Normal)
			first.Done(nil) // hands the slot to the first waiter...
			cancel()        // ...whose ctx ends before it runs
			if err := <-got; err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("attempt %d: first waiter: %v", i, err)
			}
			if s := next.state(); s != "admitted" {
				t.Fatalf("attempt %d: next waiter: %s, want admitted", i, s)
			}
			next.permit.Done(nil)
			if diff := cmp.Diff(adaptive.Stats{Limit: 1}, lim.Stats()); diff != "" {
				t.Fatalf("attempt %d: Stats mismatch (-want +got):\n%s", i, diff)
			}
		})
	}
}
