package sim

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
)

// Only a sleep on a context that can end before the run does (not the
// call's own, which ends with the run, nor one that never ends) is
// looked at after each event that may end a context: the look costs a
// step through every such sleeper. Three calls sleep 1s, on their own
// context, on context.Background and on a context of their own with a
// cancel; an AfterFunc at 500ms counts the sleepers looked at.
func TestOnlySleepsOnAContextThatCanEndAreWatched(t *testing.T) {
	var watched []int
	Run(Scenario{Clients: []Clients{{N: 3, Calls: 1}}}, PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
		clk := env.Clock()
		clk.AfterFunc(500*time.Millisecond, func() {
			env.w.mu.Lock()
			defer env.w.mu.Unlock()
			watched = append(watched, len(env.w.asleep))
		})
		n := 0
		return resilience.New("sleep", func(ctx context.Context, next resilience.Next[int]) (int, error) {
			switch n++; n {
			case 1:
				_ = clk.Sleep(ctx, time.Second)
			case 2:
				_ = clk.Sleep(context.Background(), time.Second)
			case 3:
				own, cancel := context.WithCancel(ctx)
				defer cancel()
				_ = clk.Sleep(own, time.Second)
			}
			return next.Call(ctx)
		})
	}})
	if diff := cmp.Diff([]int{1}, watched); diff != "" {
		t.Errorf("sleepers watched for their context's end at 500ms mismatch (-want +got):\n%s", diff)
	}
}
