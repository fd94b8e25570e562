package sim

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/google/go-cmp/cmp"
)

// A run whose Duration is not a whole number of Buckets has a shorter last
// bucket, and the watched breaker's state is read at its end, the end of
// the run, like every other bucket's.
func TestWatchReadsTheShortLastBucket(t *testing.T) {
	var r *Result
	done := make(chan struct{})
	go func() {
		defer close(done)
		r = Run(Scenario{Duration: 2500 * time.Millisecond, Bucket: time.Second, Clients: []Clients{{Calls: 1}}},
			PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
				brk := breaker.New(breaker.WithClock(env.Clock()))
				env.Watch(brk)
				env.Clock().AfterFunc(2*time.Second, brk.ForceOpen)
				return breaker.Policy[int](brk)
			}})
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Run did not return after 2s of wall-clock time")
	}
	c, o := breaker.Closed, breaker.Open
	if diff := cmp.Diff([]breaker.State{c, c, o}, r.Breaker); diff != "" {
		t.Errorf("breaker series mismatch (-want +got):\n%s", diff)
	}
}
