package sim

import (
	"container/heap"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/internal/goroutines"
)

// A goroutine that calls the clock or the server without holding the
// baton (one the pipeline started) becomes a proc of its own (adopted),
// queued for the baton at the next settle: numbered then, after every
// proc created before it, for the order in which
// the procs waiting for the baton get it, and known by its goroutine, so
// that when it asks for the baton again, after blocking on something
// else, it is the same proc with the same place in that order. The run is
// marked as one whose pipeline has goroutines of its own: step then spins
// longer before it looks at the stacks.
func TestEnterAdoptsAGoroutineOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld()
		w.nextID = 2  // two clients' procs
		w.outside = 1 // a goroutine of the run blocked off the clock: the run is not calm
		gids := make(chan uint64, 1)
		entered := make(chan *proc)
		again := make(chan struct{})
		go func() {
			gids <- goroutines.Current()
			entered <- w.enter()
			<-again // blocks on something other than the clock
			entered <- w.enter()
		}()
		gid := <-gids

		// waiting returns the procs waiting for the baton, once the
		// goroutine is blocked, after queueing them as the scheduler's
		// settle does; it takes the queued events off the queue, as the
		// scheduler does when it hands the baton over.
		w.group = &group{byID: map[uint64]*goroutines.State{}}
		waiting := func() []*proc {
			synctest.Wait()
			w.mu.Lock()
			defer w.mu.Unlock()
			ps := append([]*proc(nil), w.pending...)
			w.queuePendingLocked()
			for _, p := range ps {
				if e := heap.Pop(&w.queue).(*event); e != &p.ev {
					t.Errorf("queued %+v, want the wake-up of the proc waiting for the baton", e)
				}
			}
			return ps
		}
		type adoption struct {
			ID, Slot             int
			ByGoroutine, Started bool
			Client, Adopted      bool
			WakesItself          bool
		}
		ps := waiting()
		if len(ps) != 1 {
			t.Fatalf("%d procs wait for the baton, want 1", len(ps))
		}
		p := ps[0]
		w.mu.Lock()
		got := adoption{ID: p.id, Slot: p.slot, ByGoroutine: p.gid == gid && w.procs[gid] == p, Started: p.started,
			Client: p.client, Adopted: w.adopted, WakesItself: p.ev.proc == p}
		w.mu.Unlock()
		want := adoption{ID: 3, Slot: -1, ByGoroutine: true, Started: true, Adopted: true, WakesItself: true}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the adopted proc mismatch (-want +got):\n%s", diff)
		}

		p.wake <- struct{}{} // the scheduler hands it the baton
		if q := <-entered; q != p {
			t.Errorf("enter returned %p, want the adopted proc %p", q, p)
		}
		close(again)
		ps = waiting()
		if len(ps) != 1 || ps[0] != p || w.nextID != 3 {
			t.Errorf("asking again: %d procs wait (%p), %d procs numbered; want the same proc (%p) alone, 3 numbered", len(ps), ps, w.nextID, p)
		}
		p.wake <- struct{}{}
		<-entered
	})
}
