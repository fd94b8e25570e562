package resilienceredis

import (
	"testing"
	"testing/synctest"
)

// An outcome of a call admitted while closed is dropped, not counted,
// when the shared state is no longer closed by the time the call reports
// (the fleet tripped it meanwhile), even for a call admitted before the
// instance first learnt the state: the snapshot counts it as dropped, and
// no batch is sent.
func TestBreakerDropsOutcomeOfTrippedState(t *testing.T) {
	rdb := newScripted(t, nil)
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(rdb.Client, "svc", nil)
		defer b.Close()
		p, err := b.Allow()
		if err != nil {
			t.Fatal(err)
		}
		b.receive("7 2 1 30000000") // tripped by another instance: open
		p.Done(errBoom)
		if v := values(t, b.Snapshot()); v["outcomes_dropped"] != 1 {
			t.Errorf("a failure reported after the trip: outcomes_dropped %v, want 1", v["outcomes_dropped"])
		}
		if b.flush() {
			t.Errorf("a batch was sent: want none, the only outcome dropped")
		}
	})
}
