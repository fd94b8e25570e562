package resiliencetest

import (
	"runtime"
	"sync"
	"weak"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/goroutines"
)

// pipeline tells when the goroutines of a driven call are all blocked.
//
// The goroutines of the pipeline are those created, directly or through
// other goroutines, by the goroutine running the call or by the goroutine
// calling Drive (which runs the fake's AfterFunc callbacks, and so starts
// the goroutines of context.AfterFunc, say) since Drive began. A goroutine
// whose creator has already exited unseen is counted in, so that none of
// the pipeline is missed; goroutines that existed when Drive began, and
// those they create, are left out.
//
// The state of every goroutine comes from runtime.Stack(buf, true), which
// stops the world: a goroutine that another has just made ready (a send on
// the channel it receives from, a close of a context's Done channel) is
// already reported runnable, so a snapshot in which every goroutine of the
// pipeline is blocked is one in which none of them can move until something
// outside the pipeline (the fake clock, in Drive) wakes one.
type pipeline struct {
	drive  uint64 // the goroutine calling Drive
	group  *goroutines.Lineage
	stacks goroutines.Stacks
}

// members remembers, for each fake, the goroutines that earlier Drive calls
// counted in the pipeline and that were alive when the last one returned:
// an attempt a hedge left behind, an op a timeout abandoned, blocked on the
// fake, is still of the pipeline in the next Drive on that fake. An entry
// goes when its fake is garbage collected.
var members sync.Map // weak.Pointer[clock.Fake] -> map[uint64]bool

// newPipeline snapshots the goroutines alive as Drive begins on fake: those
// that earlier Drive calls on fake counted in stay in, the others are left
// out.
func newPipeline(fake *clock.Fake) *pipeline {
	p := &pipeline{drive: goroutines.Current()}
	p.group = goroutines.NewLineage(p.drive)
	var before map[uint64]bool
	if v, ok := members.Load(weak.Make(fake)); ok {
		before = v.(map[uint64]bool)
	}
	for _, g := range p.snapshot() {
		switch {
		case g.ID == p.drive:
		case before[g.ID]:
			p.group.Include(g.ID)
		default:
			p.group.Exclude(g.ID) // alive when Drive began
		}
	}
	return p
}

// save remembers the goroutines of the pipeline still alive, for the next
// Drive on fake.
func (p *pipeline) save(fake *clock.Fake) {
	alive := map[uint64]bool{}
	gs := p.snapshot()
	byID := make(map[uint64]*goroutines.State, len(gs))
	for i := range gs {
		byID[gs[i].ID] = &gs[i]
	}
	for i := range gs {
		if id := gs[i].ID; id != p.drive && p.group.Member(id, byID) {
			alive[id] = true
		}
	}
	wp := weak.Make(fake)
	if len(alive) == 0 {
		members.Delete(wp)
		return
	}
	if _, loaded := members.Swap(wp, alive); !loaded {
		runtime.AddCleanup(fake, func(wp weak.Pointer[clock.Fake]) { members.Delete(wp) }, wp)
	}
}

// quiescent reports whether every goroutine of the pipeline alive now is
// blocked (on a channel, a select, a sync.Cond, a sync.WaitGroup or a
// mutex; see goroutines.Blocked).
func (p *pipeline) quiescent() bool {
	gs := p.snapshot()
	byID := make(map[uint64]*goroutines.State, len(gs))
	for i := range gs {
		byID[gs[i].ID] = &gs[i]
	}
	quiet := true
	for i := range gs {
		g := &gs[i]
		if g.ID != p.drive && p.group.Member(g.ID, byID) && !g.Blocked {
			quiet = false
		}
	}
	return quiet
}

// snapshot returns the state of every goroutine, from one runtime.Stack.
func (p *pipeline) snapshot() []goroutines.State { return p.stacks.Take() }
