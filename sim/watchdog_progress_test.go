package sim

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
)

// Every step of a run is progress for the watchdog (Run panics only if
// the run makes no progress for 10s of wall-clock time). In a bubble,
// AfterFunc callbacks each hold the scheduler for 2s of wall-clock time,
// 12s in all, with steps in between: a call's step back at once, in a run
// where no goroutine waits off the clock; then a settle after a callback,
// in a run where a call waits on a channel. The run then has a call that
// takes its time (a wall-clock sleep), during which the scheduler looks at
// the watchdog: the run goes on to its end.
func TestWatchdogCountsEveryStep(t *testing.T) {
	const stall = 2 * time.Second // of wall-clock time, in the bubble
	ms := time.Millisecond
	for _, c := range []struct {
		name  string
		build func(env *Env) resilience.Policy[int]
		calls int // of the one client, each a success
	}{
		{"calls back at once between the stalls", func(env *Env) resilience.Policy[int] {
			clk := env.Clock()
			for k := range 6 {
				clk.AfterFunc(time.Duration(k)*10*ms+5*ms, func() { time.Sleep(stall) })
			}
			n := 0
			return resilience.New("slow last", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				if n++; n == 7 {
					time.Sleep(ms) // wall-clock, in the bubble: the scheduler waits for the step
				}
				return next.Call(ctx)
			})
		}, 7},
		{"a call waiting on a channel through the stalls", func(env *Env) resilience.Policy[int] {
			clk := env.Clock()
			gate := make(chan struct{})
			for k := range 6 {
				clk.AfterFunc(time.Duration(k)*10*ms+5*ms, func() { time.Sleep(stall) })
			}
			clk.AfterFunc(100*ms, func() { close(gate) })
			var n atomic.Int32
			return resilience.New("gate", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				if n.Add(1) == 1 {
					<-gate
					time.Sleep(ms) // wall-clock, in the bubble: the scheduler waits for it to block
				}
				return next.Call(ctx)
			})
		}, 1},
	} {
		bubble(t, func(t *testing.T) {
			var r *Result
			var panicked any
			func() {
				defer func() { panicked = recover() }()
				r = Run(Scenario{Duration: time.Second, Clients: []Clients{{Calls: c.calls}}}, PolicySet[int]{Name: c.name, Build: c.build})
			}()
			switch msg, _ := panicked.(string); {
			case strings.Contains(msg, "10s of wall-clock time"):
				t.Errorf("%s: the watchdog gave up on a run that made steps: %v", c.name, panicked)
			case panicked != nil:
				t.Errorf("%s: Run panicked: %v", c.name, panicked)
			case r.Successes != c.calls:
				t.Errorf("%s: %+v, want %d successes", c.name, r.Totals, c.calls)
			}
		})
	}
}
