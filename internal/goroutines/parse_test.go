package goroutines

import (
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// within runs f and fails t if it has not returned within 2s (a parse
// that loops for ever), a bound far beyond the microseconds it takes.
func within[V any](t *testing.T, what string, f func() V) V {
	t.Helper()
	done := make(chan V, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(2 * time.Second):
		t.Fatalf("%s did not return within 2s", what)
		panic("unreachable")
	}
}

// Parse skips what is not a goroutine header it can read, and reads a
// status that the traceback cut short.
func TestParseOddLines(t *testing.T) {
	trace := "created by main.main in goroutine 1\n" + // before any goroutine: ignored
		"goroutine x [running]:\n" + // no id: skipped
		"goroutine 3 [chan receive\n" + // status without its end
		"created by main.f\n" + // no creator named
		"goroutine 4 [running]:\n" +
		"created by main.f in goroutine zz\n" + // unreadable creator
		"goroutine 5\n" + // no status
		"goroutine 6 [select]:" // no final newline
	want := []State{{ID: 3, Blocked: true}, {ID: 4}, {ID: 5}, {ID: 6, Blocked: true}}
	got := within(t, "Parse", func() []State { return Parse([]byte(trace), nil) })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Parse mismatch (-want +got):\n%s", diff)
	}
}

// Parse appends to gs, and a goroutine's creator is read for the first
// goroutine of a traceback as for the others.
func TestParseAppendsAndReadsTheFirstCreator(t *testing.T) {
	prev := []State{{ID: 1}}
	got := within(t, "Parse", func() []State { return Parse([]byte("goroutine 2 [running]:\ncreated by f in goroutine 1\n"), prev) })
	if diff := cmp.Diff([]State{{ID: 1}, {ID: 2, Parent: 1}}, got); diff != "" {
		t.Fatalf("Parse appends mismatch (-want +got):\n%s", diff)
	}
	got = within(t, "Parse", func() []State { return Parse([]byte("goroutine 9 [select]:\ncreated by f in goroutine 8\n"), nil) })
	if diff := cmp.Diff([]State{{ID: 9, Parent: 8, Blocked: true}}, got); diff != "" {
		t.Fatalf("Parse of one goroutine mismatch (-want +got):\n%s", diff)
	}
}

// A traceback that ends in a header with nothing after "goroutine " is
// read to its end, and that header skipped.
func TestParseHeaderWithoutAnID(t *testing.T) {
	b := []byte("goroutine 1 [running]:\ngoroutine ")
	b = b[:len(b):len(b)] // nothing readable past the end
	if diff := cmp.Diff([]State{{ID: 1}}, within(t, "Parse", func() []State { return Parse(b, nil) })); diff != "" {
		t.Fatalf("Parse mismatch (-want +got):\n%s", diff)
	}
}

func TestBlocked(t *testing.T) {
	for s, want := range map[string]bool{
		"chan receive": true, "chan send": true, "select": true,
		"chan receive (nil chan)": true, "chan send (nil chan)": true, "select (no cases)": true,
		"sync.Cond.Wait": true, "sync.WaitGroup.Wait": true,
		"select (durable)": true, "chan receive (scan)": true, "chan send (leaked)": true,
		"sync.Cond.Wait (durable) (scan)": true,
		"sync.Mutex.Lock":                 true, "sync.RWMutex.Lock": true, "sync.RWMutex.RLock": true, "sync.Mutex.Lock (durable)": true,
		"running": false, "runnable": false, "syscall": false, "sleep": false, "IO wait": false,
		"semacquire": false, "": false, "running (durable)": false,
	} {
		if got := within(t, "Blocked", func() bool { return Blocked(s) }); got != want {
			t.Errorf("Blocked(%q) = %v, want %v", s, got, want)
		}
	}
}

// The zero Stacks takes snapshots; Last returns the last one, nil before.
func TestZeroStacks(t *testing.T) {
	var s Stacks
	if s.Last() != nil {
		t.Fatal("Last before any Take is not nil")
	}
	type taken struct {
		id uint64
		gs []State
	}
	r := within(t, "Take of the zero Stacks", func() taken { return taken{Current(), s.Take()} })
	id, gs := r.id, r.gs
	found := false
	for _, g := range gs {
		if g.ID == id {
			found = !g.Blocked
		}
	}
	if !found {
		t.Fatalf("the goroutine %d that took it is not in the snapshot as running", id)
	}
	if diff := cmp.Diff(gs, s.Last()); diff != "" {
		t.Fatalf("Last mismatch (-want +got):\n%s", diff)
	}
}

// Current reads the id the traceback gives the calling goroutine, for ids
// of every digit.
func TestCurrentMatchesTheTraceback(t *testing.T) {
	const n = 100 // consecutive ids: every digit appears
	ids := make(chan [2]uint64, n)
	for range n {
		go func() {
			buf := make([]byte, 1024)
			gs := Parse(buf[:runtime.Stack(buf, false)], nil)
			ids <- [2]uint64{Current(), gs[0].ID}
		}()
	}
	for range n {
		got := within(t, "a goroutine's ids", func() [2]uint64 { return <-ids })
		if got[0] != got[1] {
			t.Fatalf("Current() = %d, the traceback says %d", got[0], got[1])
		}
	}
}
