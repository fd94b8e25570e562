package rapidgen

import (
	"runtime"
	"strings"
	"testing"
)

// raisedAt calls repanic(p, site) and returns the value it panicked with
// and the line of bubble.go it panicked from.
func raisedAt(t *testing.T, p any, site uint32) (got any, line int) {
	t.Helper()
	defer func() {
		got = recover()
		pcs := make([]uintptr, 16)
		frames := runtime.CallersFrames(pcs[:runtime.Callers(0, pcs)])
		for {
			f, more := frames.Next()
			if f.Function == "github.com/f0b5b96b/resilience/resiliencetest/rapidgen.repanic" && strings.HasSuffix(f.File, "bubble.go") {
				line = f.Line
				return
			}
			if !more {
				return
			}
		}
	}()
	repanic(p, site)
	return nil, 0
}

// TestRepanicSites checks that repanic raises its value again from each
// site, and from a place of its own for each, so that rapid tells the
// failures of different sites apart; the place of invalidSite, rapid's
// running out of data, is one of its own too.
func TestRepanicSites(t *testing.T) {
	lines := make(map[int]uint32)
	for site := uint32(0); site <= invalidSite; site++ {
		p := &bubblePanic{value: site}
		got, line := raisedAt(t, p, site)
		if got != any(p) {
			t.Fatalf("repanic(p, %d) raised %v, want p", site, got)
		}
		if line == 0 {
			t.Fatalf("repanic(p, %d): no frame of repanic in the panic's stack", site)
		}
		if other, dup := lines[line]; dup {
			t.Errorf("sites %d and %d raise from the same line %d", other, site, line)
		}
		lines[line] = site
	}
}
