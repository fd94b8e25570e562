package resiliencetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseGoroutines(t *testing.T) {
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
	want := []gstate{
		{id: 1},
		{id: 7, parent: 1, blocked: true},
		{id: 8, parent: 7, blocked: true},
		{id: 9, parent: 7, blocked: true},
		{id: 10},
		{id: 11},
		{id: 12},
	}
	got := parseGoroutines([]byte(trace), nil)
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(gstate{})); diff != "" {
		t.Fatalf("parseGoroutines mismatch (-want +got):\n%s", diff)
	}
}

func TestCurrentGoroutineIsInTheSnapshot(t *testing.T) {
	id := currentGoroutine()
	if id == 0 {
		t.Fatal("currentGoroutine() = 0")
	}
	p := &pipeline{buf: make([]byte, 1024)} // small: snapshot grows it
	found := false
	for _, g := range p.snapshot() {
		if g.id == id {
			found = true
		}
	}
	if !found {
		t.Fatalf("goroutine %d, the caller, is not in the snapshot", id)
	}
}
