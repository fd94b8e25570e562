package sim

import (
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
)

// A simulated call that ends gives the baton back only if it holds it: a
// call that blocked off the clock, and so gave the baton up, and then
// returned without asking for it again leaves the baton with its holder
// and gives nothing back on the scheduler's channel (which the scheduler
// would take for the holder's).
func TestProcEndGivesTheBatonBackOnlyIfItHoldsIt(t *testing.T) {
	type end struct {
		HolderAfter string
		GivenBack   int
		Done        bool
	}
	for _, c := range []struct {
		name  string
		holds bool
		want  end
	}{
		{"holding the baton", true, end{HolderAfter: "none", GivenBack: 1, Done: true}},
		{"having given it up", false, end{HolderAfter: "another", GivenBack: 0, Done: true}},
	} {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld()
			other := &proc{w: w}
			p := &proc{w: w, wake: make(chan struct{}), slot: -1, client: true}
			p.body = func() {
				if !c.holds {
					w.mu.Lock()
					w.cur = other // it blocked off the clock; another took the baton
					w.mu.Unlock()
				}
			}
			w.cur = p
			go p.main()
			p.wake <- struct{}{}
			synctest.Wait() // p has ended: it waits for the end of the run
			w.mu.Lock()
			got := end{HolderAfter: map[*proc]string{nil: "none", p: "the ended call", other: "another"}[w.cur], GivenBack: len(w.yield), Done: p.done}
			w.mu.Unlock()
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("a call ending %s mismatch (-want +got):\n%s", c.name, diff)
			}
			close(w.ended)
		})
	}
}
