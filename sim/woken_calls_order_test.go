package sim

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
)

// Calls that one event wakes from a wait on something other than the
// clock go on in the order they were created (the package doc's
// Determinism): eight clients, started 10ms apart, wait on a channel that
// an AfterFunc closes at 1s; they end in the order they started, so the
// latencies, in the order the calls ended, go down by 10ms.
func TestWokenCallsGoOnInTheOrderTheyWereCreated(t *testing.T) {
	var r *Result
	done := make(chan struct{})
	go func() {
		defer close(done)
		r = Run(Scenario{Duration: 2 * time.Second, Clients: []Clients{
			{Calls: 1}, {Start: 10 * time.Millisecond, Calls: 1}, {Start: 20 * time.Millisecond, Calls: 1}, {Start: 30 * time.Millisecond, Calls: 1},
			{Start: 40 * time.Millisecond, Calls: 1}, {Start: 50 * time.Millisecond, Calls: 1}, {Start: 60 * time.Millisecond, Calls: 1},
			{Start: 70 * time.Millisecond, Calls: 1}}},
			PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
				gate := make(chan struct{})
				env.Clock().AfterFunc(time.Second, func() { close(gate) })
				return resilience.New("gate", func(ctx context.Context, _ resilience.Next[int]) (int, error) {
					select {
					case <-gate:
						return 0, nil
					case <-ctx.Done():
						return 0, ctx.Err()
					}
				})
			}})
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Run did not return after 2s of wall-clock time")
	}
	var want []time.Duration
	for i := range 8 {
		want = append(want, time.Second-time.Duration(i)*10*time.Millisecond)
	}
	if diff := cmp.Diff(want, r.Latencies); diff != "" {
		t.Errorf("latencies in the order the calls ended mismatch (-want +got):\n%s", diff)
	}
}
