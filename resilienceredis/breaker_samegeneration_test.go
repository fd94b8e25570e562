package resilienceredis

import (
	"testing"
	"testing/synctest"
)

// An outcome counts in the view there is when its call was admitted in
// the same generation, not an older one: here a call admitted while a
// round trip replied a state the view had already passed (a generation
// published meanwhile, half-open), reported once the view is closed in
// that generation again (the state went back, then through 256 epochs:
// the view's count of jumps, kept mod 256, is the same again). It is
// counted, not dropped.
func TestBreakerCountsOutcomeOfSameGeneration(t *testing.T) {
	rdb := newScripted(t, nil)
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(rdb.Client, "svc", nil)
		defer b.Close()
		b.receive("7 5 2 0") // half-open
		rdb.setReply(func(c scriptCall) (any, error) {
			b.receive("7 6 2 0")                    // published during the round trip
			return stateReply("7", 6, 0, 0, 1), nil // closed: admitted as a closed call
		})
		p, err := b.Allow()
		if err != nil {
			t.Fatal(err)
		}
		for i := range 256 {
			b.receive([]string{"8 6 0 0", "7 6 0 0"}[i%2])
		}
		p.Done(errBoom)
		if v := values(t, b.Snapshot()); v["outcomes_dropped"] != 0 {
			t.Errorf("a failure of generation 6 reported in generation 6: outcomes_dropped %v, want 0", v["outcomes_dropped"])
		}
		if !b.flush() {
			t.Errorf("no batch sent, want the failure's")
		}
	})
}
