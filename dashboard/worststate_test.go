package dashboard

import (
	"testing"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

// A tile's state is the worst of its guards' states, whichever comes
// first: an open breaker beside a closed guard of another kind is open.
func TestTileStateIsTheWorst(t *testing.T) {
	d, _, reg := newFakeDashboard(t)
	open := newFake(breaker.Kind, "db") // "breaker" sorts before "zone", so comes first
	open.set(func(s *telemetry.Snapshot) { s.State = telemetry.StateOpen })
	closed := newFake("zone", "db")
	closed.set(func(s *telemetry.Snapshot) { s.State = telemetry.StateClosed })
	register(t, reg, open)
	register(t, reg, closed)
	if got := snap(t, d, false).Guards[0].State; got != telemetry.StateOpen {
		t.Errorf("tile state %q, want open (the worst of open and closed)", got)
	}
}
