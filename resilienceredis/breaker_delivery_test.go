package resilienceredis

import (
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/breaker"
)

// A transition that comes while OnStateChange is still busy with the one
// before is delivered as soon as that call returns, with no later
// transition needed to push it out. The clock is a synctest bubble's.
func TestBreakerDeliversTransitionDuringCallback(t *testing.T) {
	rdb := newScripted(t, nil)
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		rec := &transitions{}
		first := true
		b := newBreaker(rdb.Client, "svc", []BreakerOption{WithOnStateChange(func(tr breaker.Transition) {
			if first {
				first = false
				<-gate // the first call lasts until the test ends it
			}
			rec.add(tr)
		})})
		b.wg.Add(1)
		go b.deliverLoop()
		defer b.Close()
		synctest.Wait()            // the deliverer waits for transitions
		b.receive("7 2 1 1000000") // open
		synctest.Wait()            // OnStateChange busy with it
		b.receive("7 3 2 0")       // half-open, while it is busy
		close(gate)
		synctest.Wait()
		if diff := cmp.Diff([]string{"closed->open", "open->half-open"}, rec.get()); diff != "" {
			t.Errorf("transitions delivered: mismatch (-want +got):\n%s", diff)
		}
	})
}
