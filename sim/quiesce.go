package sim

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
)

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
	sched uint64          // the scheduler's goroutine
	old   map[uint64]bool // alive when the run began
	in    map[uint64]bool // seen, of the run
	out   map[uint64]bool // seen, not of the run
	buf   []byte
	gs    []gstate
	byID  map[uint64]*gstate
}

// gstate is one goroutine of a snapshot.
type gstate struct {
	id, parent uint64 // parent is 0 when the traceback does not name it
	blocked    bool
}

func newGroup(sched uint64) *group {
	g := &group{sched: sched, old: map[uint64]bool{}, in: map[uint64]bool{}, out: map[uint64]bool{}, buf: make([]byte, 64<<10),
		byID: map[uint64]*gstate{}}
	for _, s := range g.snapshot() {
		if s.id != sched {
			g.old[s.id] = true
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
		g.byID[gs[i].id] = &gs[i]
	}
	quiet = true
	for i := range gs {
		s := &gs[i]
		if s.id == id {
			alive, blocked = true, s.blocked
		}
		if s.id != g.sched && g.member(s.id, 0) && !s.blocked {
			quiet = false
		}
	}
	return quiet, alive, blocked
}

// member reports whether goroutine id, alive in g.byID, is of the run,
// and remembers the answer.
func (g *group) member(id uint64, depth int) bool {
	switch {
	case id == g.sched || g.in[id]:
		return true
	case g.old[id] || g.out[id]:
		return false
	}
	var in bool
	switch parent := g.byID[id].parent; {
	case parent == g.sched || g.in[parent]:
		in = true
	case g.old[parent] || g.out[parent]:
		in = false
	case g.byID[parent] != nil && depth < 1000:
		in = g.member(parent, depth+1)
	default: // the creator is gone unseen, or unnamed: count it in
		in = true
	}
	if in {
		g.in[id] = true
	} else {
		g.out[id] = true
	}
	return in
}

// snapshot returns the state of every goroutine, from one runtime.Stack.
func (g *group) snapshot() []gstate {
	for {
		n := runtime.Stack(g.buf, true)
		if n < len(g.buf) {
			g.gs = parseGoroutines(g.buf[:n], g.gs[:0])
			return g.gs
		}
		g.buf = make([]byte, 2*len(g.buf))
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
// waits for another goroutine to wake it. A goroutine that is running,
// runnable, in a system call, sleeping on the real clock or waiting for a
// mutex (which its holder, running, will release) is not blocked.
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

// goid returns the id of the calling goroutine, from the first line of its
// traceback.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = b[len(goroutinePrefix):]
	var id uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}
