package sim

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
)

// At the end of the run the calls in progress are unwound in the order of
// virtual time, as every event is: first the calls that the end itself
// wakes (waiting on their context), at the end's instant, then the calls
// asleep on the clock past the end, in the order of their wake-ups. Run
// of 1s: the first call waits on its context, then sleeps on the clock
// (cut at once); the second sleeps until 2s, the third until 3s.
func TestEndUnwindsTheCallsInTimeOrder(t *testing.T) {
	var mu sync.Mutex
	var order []string
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, s)
	}
	Run(Scenario{Duration: time.Second, Clients: []Clients{{Calls: 1}, {Calls: 1}, {Calls: 1}}},
		PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
			clk := env.Clock()
			var n atomic.Int32 // a call that waits off the clock hands no baton back: state shared across calls needs a lock
			return resilience.New("wait", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				switch n.Add(1) {
				case 1:
					<-ctx.Done()
					_ = clk.Sleep(context.Background(), time.Millisecond)
					note("woken by the end")
				case 2:
					_ = clk.Sleep(context.Background(), 2*time.Second)
					note("asleep until 2s")
				case 3:
					_ = clk.Sleep(context.Background(), 3*time.Second)
					note("asleep until 3s")
				}
				return 0, nil
			})
		}})
	if diff := cmp.Diff([]string{"woken by the end", "asleep until 2s", "asleep until 3s"}, order); diff != "" {
		t.Errorf("calls unwound at the end mismatch (-want +got):\n%s", diff)
	}
}
