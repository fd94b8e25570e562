package goroutines

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	trace := "goroutine 1 [running]:\n" +
		"main.main()\n\t/x/main.go:5 +0x1d\n\n" +
		"goroutine 7 [chan receive, 2 minutes]:\n" +
		"main.f()\n\t/x/main.go:9 +0x1d\n" +
		"created by main.main in goroutine 1\n\t/x/main.go:4 +0x25\n\n" +
		"goroutine 8 [select (durable), synctest bubble 3]:\n" +
		"created by main.f in goroutine 7\n\t/x/main.go:10 +0x25\n\n" +
		"goroutine 9 gp=0xc000 m=nil [sync.WaitGroup.Wait (durable) (scan), locked to thread]:\n" +
		"created by main.f in goroutine 7\n\t/x/main.go:10 +0x25\n\n" +
		"goroutine 10 [sync.Mutex.Lock]:\n\n" +
		"goroutine 11 [runnable]:\n" +
		"created by time.goFunc\n\t/go/time/sleep.go:215 +0x2d\n\n" +
		"goroutine 12 [sleep]:\n"
	want := []State{
		{ID: 1},
		{ID: 7, Parent: 1, Blocked: true},
		{ID: 8, Parent: 7, Blocked: true},
		{ID: 9, Parent: 7, Blocked: true},
		{ID: 10, Blocked: true},
		{ID: 11},
		{ID: 12},
	}
	if diff := cmp.Diff(want, within(t, "Parse", func() []State { return Parse([]byte(trace), nil) })); diff != "" {
		t.Fatalf("Parse mismatch (-want +got):\n%s", diff)
	}
}

// The caller is in a snapshot, goroutines blocked (on a channel, on a
// mutex another holds) read as blocked, and a small buffer grows.
func TestTakeFindsTheCallerAndABlockedGoroutine(t *testing.T) {
	id := Current()
	if id == 0 {
		t.Fatal("Current() = 0")
	}
	var mu sync.Mutex
	var rw sync.RWMutex
	var acquired atomic.Int32 // by the goroutines that waited on a mutex, once released
	for _, c := range []struct {
		name        string
		hold, leave func()
		wait        func()
	}{
		{"a channel", func() {}, func() {}, nil},
		{"a sync.Mutex", mu.Lock, mu.Unlock, func() { mu.Lock(); acquired.Add(1); mu.Unlock() }},
		{"a sync.RWMutex's Lock", rw.RLock, rw.RUnlock, func() { rw.Lock(); acquired.Add(1); rw.Unlock() }},
		{"a sync.RWMutex's RLock", rw.Lock, rw.Unlock, func() { rw.RLock(); acquired.Add(1); rw.RUnlock() }},
	} {
		block := make(chan struct{})
		started := make(chan uint64)
		c.hold()
		go func() {
			started <- Current()
			if c.wait != nil {
				c.wait()
				return
			}
			<-block
		}()
		other := <-started
		s := &Stacks{buf: make([]byte, 16)} // small: Take grows it
		var self, blocked bool
		for range 1000 { // until the other goroutine has parked
			self, blocked = false, false
			type taken struct {
				id uint64
				gs []State
			}
			r := within(t, "Take", func() taken { return taken{Current(), s.Take()} })
			for _, g := range r.gs {
				switch g.ID {
				case r.id:
					self = !g.Blocked
				case other:
					blocked = g.Blocked && g.Parent == id
				}
			}
			if blocked {
				break
			}
			runtime.Gosched()
		}
		close(block)
		c.leave()
		if !self || !blocked {
			t.Errorf("waiting on %s: caller %d found running: %v; goroutine %d found blocked, created by the caller: %v", c.name, id, self, other, blocked)
		}
	}
}
