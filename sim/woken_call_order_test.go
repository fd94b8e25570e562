package sim

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
)

// A call woken from a wait on something other than the clock asks for the
// baton again before it ends: its end is queued after the events already
// queued for that instant. Here the first call (client 1, from 0) waits on
// a channel that an AfterFunc closes at 1s; the second (client 2, from
// 500ms) sleeps on the clock until 1s, queued before the first asks again.
// So the second ends first: Latencies, in the order the calls ended, are
// [500ms, 1s], in every run.
func TestWokenCallEndsAfterTheEventsQueuedBefore(t *testing.T) {
	var r *Result
	done := make(chan struct{})
	go func() {
		defer close(done)
		r = Run(Scenario{Duration: 2 * time.Second, Bucket: time.Second,
			Clients: []Clients{{Calls: 1}, {Calls: 1, Start: 500 * time.Millisecond}}},
			PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
				clk := env.Clock()
				ch := make(chan struct{})
				clk.AfterFunc(time.Second, func() { close(ch) })
				var n atomic.Int32
				return resilience.New("wait", func(ctx context.Context, _ resilience.Next[int]) (int, error) {
					if n.Add(1) == 1 {
						select {
						case <-ch:
							return 0, nil
						case <-ctx.Done():
							return 0, ctx.Err()
						}
					}
					return 0, clk.Sleep(ctx, epoch.Add(time.Second).Sub(clk.Now()))
				})
			}})
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Run did not return after 2s of wall-clock time")
	}
	if diff := cmp.Diff([]time.Duration{500 * time.Millisecond, time.Second}, r.Latencies); diff != "" {
		t.Errorf("latencies mismatch (-want +got):\n%s", diff)
	}
	if r.Successes != 2 {
		t.Errorf("%+v: want 2 successes", r.Totals)
	}
}
