package dashboard

import (
	"fmt"
	"sync"
	"time"

	"github.com/f0b5b96b/resilience/telemetry"
)

// fakeGuard is a telemetry.Guard whose snapshot a test sets: the
// bulkheads and rate limiters of tests, whatever the policies report.
type fakeGuard struct {
	mu sync.Mutex
	s  telemetry.Snapshot
}

func newFake(kind telemetry.Kind, name string) *fakeGuard {
	return &fakeGuard{s: telemetry.Snapshot{Kind: kind, Name: name}}
}

func (g *fakeGuard) Name() string { return g.Snapshot().Name }

func (g *fakeGuard) Snapshot() telemetry.Snapshot {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.s
}

func (g *fakeGuard) set(f func(s *telemetry.Snapshot)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f(&g.s)
}

// current returns a copy of the snapshot d.read gives at now.
func (d *Dashboard) current(now time.Time, full bool) (data []byte, seq uint64) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.read(now, full, func(b []byte, s uint64) { data, seq = append([]byte(nil), b...), s })
	}()
	select {
	case <-done:
	case <-time.After(patience):
		// A bound for failure only: a snapshot takes microseconds.
		panic(fmt.Sprintf("a snapshot at %v did not return within %v", now, patience))
	}
	return data, seq
}
