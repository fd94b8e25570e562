// Package goroutines reads the states of all goroutines from one
// runtime.Stack traceback, for the fake-clock driver of package
// resiliencetest and for the simulator, which both advance time only when
// every goroutine of a pipeline waits for another to wake it.
//
// runtime.Stack(buf, true) stops the world, so a snapshot is consistent: a
// goroutine that another has just made ready (a send on the channel it
// receives from, a close of a context's Done channel) is already reported
// runnable. The traceback's text is not a stable API: the wait reasons
// read here are those of Go 1.26 ("chan receive", "select",
// "sync.WaitGroup.Wait", ...), and CI runs on the minimum toolchain too.
package goroutines

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
)

// State is one goroutine of a snapshot.
type State struct {
	ID      uint64
	Parent  uint64 // the goroutine that created it; 0 when the traceback does not name it
	Blocked bool   // it waits for another goroutine to wake it (see [Blocked])
}

// Stacks takes snapshots of every goroutine, reusing its buffers; it is
// not safe for simultaneous use.
type Stacks struct {
	buf []byte
	gs  []State
}

// Take returns the state of every goroutine now, from one runtime.Stack.
// The slice is reused by the next Take.
func (s *Stacks) Take() []State {
	if len(s.buf) == 0 {
		s.buf = make([]byte, 64<<10)
	}
	for {
		n := runtime.Stack(s.buf, true)
		if n < len(s.buf) {
			s.gs = Parse(s.buf[:n], s.gs[:0])
			return s.gs
		}
		s.buf = make([]byte, 2*len(s.buf))
	}
}

// Last returns the snapshot of the last Take, or nil before the first.
func (s *Stacks) Last() []State { return s.gs }

var (
	goroutinePrefix = []byte("goroutine ")
	createdInfix    = []byte(" in goroutine ")
	createdPrefix   = []byte("created by ")
)

// Parse appends to gs the goroutines of a traceback of all goroutines, as
// runtime.Stack(buf, true) writes it:
//
//	goroutine 7 [chan receive, 2 minutes]:
//	...frames...
//	created by pkg.f in goroutine 6
func Parse(b []byte, gs []State) []State {
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
			gs = append(gs, State{ID: id, Blocked: Blocked(status)})
		case bytes.HasPrefix(line, createdPrefix) && len(gs) > 0:
			if i := bytes.LastIndex(line, createdInfix); i >= 0 {
				if id, err := strconv.ParseUint(string(line[i+len(createdInfix):]), 10, 64); err == nil {
					gs[len(gs)-1].Parent = id
				}
			}
		}
	}
	return gs
}

// Blocked reports whether a goroutine in the traceback status s (the text
// in brackets up to the first comma) waits for another goroutine to wake
// it: on a channel, a select, a sync.Cond, a sync.WaitGroup, or a
// sync.Mutex or sync.RWMutex that another goroutine holds (which may
// itself wait: a holder that runs is not blocked, and the holder's Unlock
// makes the waiter runnable before it returns). A goroutine that is
// running, runnable, in a system call, in the runtime, sleeping on the
// real clock or waiting for I/O is not blocked: it moves on by itself.
func Blocked(s string) bool {
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
		"sync.Cond.Wait", "sync.WaitGroup.Wait",
		"sync.Mutex.Lock", "sync.RWMutex.Lock", "sync.RWMutex.RLock":
		return true
	}
	return false
}

// Current returns the id of the calling goroutine, from the first line of
// its traceback.
func Current() uint64 {
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
