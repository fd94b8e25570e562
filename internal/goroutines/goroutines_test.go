package goroutines

import (
	"runtime"
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
		{ID: 10},
		{ID: 11},
		{ID: 12},
	}
	if diff := cmp.Diff(want, within(t, "Parse", func() []State { return Parse([]byte(trace), nil) })); diff != "" {
		t.Fatalf("Parse mismatch (-want +got):\n%s", diff)
	}
}

// The caller is in a snapshot, blocked goroutines read as blocked, and a
// small buffer grows.
func TestTakeFindsTheCallerAndABlockedGoroutine(t *testing.T) {
	id := Current()
	if id == 0 {
		t.Fatal("Current() = 0")
	}
	block := make(chan struct{})
	started := make(chan uint64)
	go func() {
		started <- Current()
		<-block
	}()
	other := <-started
	defer close(block)
	s := &Stacks{buf: make([]byte, 16)} // small: Take grows it
	var self, blocked bool
	for range 1000 { // until the other goroutine has parked on block
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
	if !self || !blocked {
		t.Fatalf("caller %d found running: %v; goroutine %d found blocked, created by the caller: %v", id, self, other, blocked)
	}
}
