package sim

import "github.com/f0b5b96b/resilience/internal/goroutines"

// group tells when the goroutines of a run are all blocked, from
// runtime.Stack of all goroutines (which stops the world: a goroutine that
// another has just made ready is already reported runnable).
//
// The goroutines of a run are those created, directly or through other
// goroutines, by the scheduler (the goroutine of Run) since the run began:
// the simulated calls, and the goroutines that the pipeline starts (a
// hedge's attempts, a timeout's abandonable op, the propagation of a
// context's end). A goroutine whose creator is gone unseen is counted in;
// goroutines that existed when the run began are left out.
type group struct {
	sched  uint64 // the scheduler's goroutine
	run    *goroutines.Lineage
	stacks goroutines.Stacks
	byID   map[uint64]*goroutines.State
}

func newGroup(sched uint64) *group {
	g := &group{sched: sched, run: goroutines.NewLineage(sched), byID: map[uint64]*goroutines.State{}}
	for _, s := range g.snapshot() {
		if s.ID != sched {
			g.run.Exclude(s.ID) // alive when the run began
		}
	}
	return g
}

// quiescent reports whether every goroutine of the run is blocked (on a
// channel, a select, a sync.Cond or a sync.WaitGroup), and the state of
// goroutine id: alive and blocked.
func (g *group) quiescent(id uint64) (quiet, alive, blocked bool) {
	gs := g.snapshot()
	clear(g.byID)
	for i := range gs {
		g.byID[gs[i].ID] = &gs[i]
	}
	quiet = true
	for i := range gs {
		s := &gs[i]
		if s.ID == id {
			alive, blocked = true, s.Blocked
		}
		if s.ID != g.sched && g.run.Member(s.ID, g.byID) && !s.Blocked {
			quiet = false
		}
	}
	return quiet, alive, blocked
}

// snapshot returns the state of every goroutine, from one runtime.Stack.
func (g *group) snapshot() []goroutines.State { return g.stacks.Take() }
