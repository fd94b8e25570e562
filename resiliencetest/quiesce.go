package resiliencetest

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"weak"

	"github.com/f0b5b96b/resilience/clock"
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
	drive uint64          // the goroutine calling Drive
	old   map[uint64]bool // goroutines alive when Drive began, drive aside
	in    map[uint64]bool // goroutines of the pipeline seen so far
	out   map[uint64]bool // goroutines seen so far that are not of it
	buf   []byte
	gs    []gstate
}

// gstate is one goroutine of a snapshot.
type gstate struct {
	id, parent uint64 // parent is 0 when the traceback does not name it
	blocked    bool
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
	p := &pipeline{old: map[uint64]bool{}, in: map[uint64]bool{}, out: map[uint64]bool{}, buf: make([]byte, 64<<10)}
	p.drive = currentGoroutine()
	var before map[uint64]bool
	if v, ok := members.Load(weak.Make(fake)); ok {
		before = v.(map[uint64]bool)
	}
	for _, g := range p.snapshot() {
		switch {
		case g.id == p.drive:
		case before[g.id]:
			p.in[g.id] = true
		default:
			p.old[g.id] = true
		}
	}
	return p
}

// save remembers the goroutines of the pipeline still alive, for the next
// Drive on fake.
func (p *pipeline) save(fake *clock.Fake) {
	alive := map[uint64]bool{}
	gs := p.snapshot()
	byID := make(map[uint64]*gstate, len(gs))
	for i := range gs {
		byID[gs[i].id] = &gs[i]
	}
	for i := range gs {
		if id := gs[i].id; id != p.drive && p.member(id, byID, 0) {
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
// blocked (on a channel, a select, a sync.Cond or a sync.WaitGroup).
func (p *pipeline) quiescent() bool {
	gs := p.snapshot()
	byID := make(map[uint64]*gstate, len(gs))
	for i := range gs {
		byID[gs[i].id] = &gs[i]
	}
	quiet := true
	for i := range gs {
		g := &gs[i]
		if g.id != p.drive && p.member(g.id, byID, 0) && !g.blocked {
			quiet = false
		}
	}
	return quiet
}

// member reports whether goroutine id, alive in byID, is of the pipeline,
// and remembers the answer.
func (p *pipeline) member(id uint64, byID map[uint64]*gstate, depth int) bool {
	switch {
	case id == p.drive || p.in[id]:
		return true
	case p.old[id] || p.out[id]:
		return false
	}
	g := byID[id]
	var in bool
	switch parent := g.parent; {
	case parent == p.drive || p.in[parent]:
		in = true
	case p.old[parent] || p.out[parent]:
		in = false
	case byID[parent] != nil && depth < 1000:
		in = p.member(parent, byID, depth+1)
	default: // the creator is gone unseen, or unnamed: count it in
		in = true
	}
	if in {
		p.in[id] = true
	} else {
		p.out[id] = true
	}
	return in
}

// snapshot returns the state of every goroutine, from one runtime.Stack.
func (p *pipeline) snapshot() []gstate {
	for {
		n := runtime.Stack(p.buf, true)
		if n < len(p.buf) {
			p.gs = parseGoroutines(p.buf[:n], p.gs[:0])
			return p.gs
		}
		p.buf = make([]byte, 2*len(p.buf))
	}
}

var (
	goroutinePrefix = []byte("goroutine ")
	createdInfix    = []byte(" in goroutine ")
	createdPrefix   = []byte("created by ")
)

// parseGoroutines appends to gs the goroutines of a traceback of all
// goroutines, as runtime.Stack(buf, true) writes it:
//
//	goroutine 7 [chan receive, 2 minutes]:
//	...frames...
//	created by pkg.f in goroutine 6
func parseGoroutines(b []byte, gs []gstate) []gstate {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		switch {
		case bytes.HasPrefix(line, goroutinePrefix):
			rest := line[len(goroutinePrefix):]
			end := 0
			for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
				end++
			}
			id, err := strconv.ParseUint(string(rest[:end]), 10, 64)
			if err != nil {
				continue
			}
			status := ""
			if i := bytes.IndexByte(rest, '['); i >= 0 {
				s := rest[i+1:]
				if j := bytes.IndexAny(s, ",]"); j >= 0 {
					s = s[:j]
				}
				status = string(s)
			}
			gs = append(gs, gstate{id: id, blocked: blockedStatus(status)})
		case bytes.HasPrefix(line, createdPrefix) && len(gs) > 0:
			if i := bytes.LastIndex(line, createdInfix); i >= 0 {
				if id, err := strconv.ParseUint(string(line[i+len(createdInfix):]), 10, 64); err == nil {
					gs[len(gs)-1].parent = id
				}
			}
		}
	}
	return gs
}

// blockedStatus reports whether a goroutine in the traceback status s
// (the text in brackets up to the first comma) waits for another goroutine
// to wake it. A goroutine that is running, runnable, in a system call, in
// the runtime, sleeping on the real clock, waiting for I/O or for a mutex
// (which its holder, running, will release) is not blocked: it moves on by
// itself.
func blockedStatus(s string) bool {
	for trimmed := true; trimmed; {
		trimmed = false
		for _, suffix := range []string{" (durable)", " (scan)", " (leaked)"} {
			if t, ok := strings.CutSuffix(s, suffix); ok {
				s, trimmed = t, true
			}
		}
	}
	switch s {
	case "chan receive", "chan send", "select",
		"chan receive (nil chan)", "chan send (nil chan)", "select (no cases)",
		"sync.Cond.Wait", "sync.WaitGroup.Wait":
		return true
	}
	return false
}

// currentGoroutine returns the id of the calling goroutine, from the first
// line of its traceback.
func currentGoroutine() uint64 {
	var buf [64]byte
	gs := parseGoroutines(buf[:runtime.Stack(buf[:], false)], nil)
	if len(gs) == 0 {
		return 0
	}
	return gs[0].id
}
