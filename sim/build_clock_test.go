package sim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// Build may set an AfterFunc on the run's clock (env.Clock() is the run's
// clock from Build on): it runs at its virtual time in the run. Here it
// forces a watched breaker open at 1s, the end of the first bucket: the
// series reads the state 1ns before each bucket's end, so the first is
// still closed.
func TestBuildMaySetAnAfterFunc(t *testing.T) {
	c, o := breaker.Closed, breaker.Open
	got := forcedOpenSeries(t, 3*time.Second, time.Second)
	if diff := cmp.Diff([]breaker.State{c, o, o}, got); diff != "" {
		t.Errorf("breaker series mismatch (-want +got):\n%s", diff)
	}
}

// forcedOpenSeries runs a scenario of the given Duration (1s buckets,
// one call) whose Build forces a watched breaker open at the virtual
// instant at, through an AfterFunc on the run's clock, and returns the
// Result's Breaker series. It fails t if Run has not returned after 2s of
// wall-clock time (a bound for failure only).
func forcedOpenSeries(t *testing.T, d, at time.Duration) []breaker.State {
	t.Helper()
	var r *Result
	done := make(chan struct{})
	go func() {
		defer close(done)
		r = Run(Scenario{Duration: d, Bucket: time.Second, Clients: []Clients{{Calls: 1}}},
			PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
				brk := breaker.New(breaker.WithClock(env.Clock()))
				env.Watch(brk)
				env.Clock().AfterFunc(at, brk.ForceOpen)
				return breaker.Policy[int](brk)
			}})
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Run did not return after 2s of wall-clock time")
	}
	return r.Breaker
}

// Sleep is not for Build (it is not a simulated call): it panics rather
// than hang.
func TestBuildMayNotSleep(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		wantPanic(t, "sim: Sleep called outside a simulated call", func() {
			Run(Scenario{Duration: time.Second, Clients: []Clients{{Calls: 1}}},
				PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
					_ = env.Clock().Sleep(t.Context(), time.Millisecond)
					return breaker.Policy[int](breaker.New())
				}})
		})
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Run did not return after 2s of wall-clock time")
	}
}
