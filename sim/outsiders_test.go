package sim

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
)

// A goroutine that a goroutine from outside the run starts while the run
// goes on is not of the run: the run does not wait for it to block. Here
// it never blocks (it yields in a loop until the test ends), and the run
// still ends. The run is bounded: it fails after 2s instead of waiting on
// the outsider (a bound for failure only: the run takes milliseconds).
func TestGoroutinesStartedFromOutsideAreNotOfTheRun(t *testing.T) {
	spawn := make(chan struct{}, 1)
	var started, stop atomic.Bool
	defer stop.Store(true)
	go func() { // outside the run: alive before it begins
		<-spawn
		go func() { // started during the run, from outside it
			started.Store(true)
			for !stop.Load() {
				runtime.Gosched()
			}
		}()
	}()
	done := make(chan *Result, 1)
	go func() {
		done <- Run(Scenario{Duration: time.Second, Clients: []Clients{{Calls: 2}}}, PolicySet[int]{Build: func(*Env) resilience.Policy[int] {
			return resilience.New("outsider", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				select {
				case spawn <- struct{}{}:
					// Busy until the outsider's goroutine runs (bounded:
					// the test fails at 2s anyway).
					for deadline := time.Now().Add(2 * time.Second); !started.Load() && time.Now().Before(deadline); {
						runtime.Gosched()
					}
				default:
				}
				return next.Call(ctx)
			})
		}})
	}()
	select {
	case r := <-done:
		if r.Successes != 2 {
			t.Errorf("%+v, want 2 successes", r.Totals)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the run did not end after 2s: it waited for a goroutine started from outside it")
	}
	if !started.Load() {
		t.Fatal("the outsider's goroutine never started: the test tested nothing")
	}
}

// A goroutine whose creator, started by a call, ended before the run
// looked at it, is of the run all the same: the run adopts it, and waits
// on its sleep on the run's clock.
func TestGoroutineOfAGoneCreatorIsOfTheRun(t *testing.T) {
	r := Run(Scenario{Duration: time.Minute, Server: Server{Base: 10 * time.Millisecond}, Clients: []Clients{{Calls: 2}}},
		PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
			clk := env.Clock()
			return resilience.New("grandchild", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				slept := make(chan error, 1)
				go func() { // ends at once, before the run looks
					go func() { slept <- clk.Sleep(ctx, 20*time.Millisecond) }()
				}()
				if err := <-slept; err != nil {
					return 0, err
				}
				return next.Call(ctx)
			})
		}})
	want := []time.Duration{30 * time.Millisecond, 30 * time.Millisecond}
	if diff := cmp.Diff(want, r.Latencies); diff != "" || r.Successes != 2 {
		t.Errorf("%+v, latencies mismatch (-want +got):\n%s", r.Totals, diff)
	}
}
