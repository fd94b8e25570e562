package dashboard

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

// What on-call reads from the JSON: an open breaker's open_for and
// cooldown_left (in seconds, described as such), a keyed guard's top keys
// (key, state, refusals), and a guard's own state (a fleet guard's
// "shared" or "local") as the guard gives it, on its tile too.
func TestOnCallJSON(t *testing.T) {
	d, f, reg := newFakeDashboard(t)
	pay := breaker.New(breaker.WithName("pay"), breaker.WithThreshold(1), breaker.WithCooldown(30*time.Second), breaker.WithClock(f))
	hosts := breaker.NewKeyed[string](breaker.WithName("hosts"), breaker.WithThreshold(1), breaker.WithClock(f))
	hosts.Breaker("a.example").Record(true)
	for range 2 {
		_, _ = hosts.Breaker("a.example").Allow() // refused
	}
	hosts.Breaker("b.example")
	fleet := newFake("fleetlimit", "quota")
	fleet.set(func(s *telemetry.Snapshot) {
		s.State = "local" // its store is unreachable: it limits on its own
		s.Values = values("shared", 0)
	})
	for _, g := range []telemetry.Guard{pay, hosts, fleet} {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	pay.Record(true)
	f.Advance(12 * time.Second)

	s := snap(t, d, false)
	byName := map[string]tileJSON{}
	for _, g := range s.Guards {
		byName[g.Name] = g
	}
	if p := byName["pay"].Guards[0]; p.State != "open" || *p.Values["open_for"] != 12 || *p.Values["cooldown_left"] != 18 {
		t.Errorf("pay: state %q, open_for %v, cooldown_left %v; want open, 12, 18", p.State, *p.Values["open_for"], *p.Values["cooldown_left"])
	}
	for _, v := range []string{"open_for", "cooldown_left"} {
		if got := s.Values["breaker"][v]; got.Unit != "s" || got.Type != "gauge" || got.Help == "" {
			t.Errorf("the breaker's %s is described as %+v, want a gauge in s with help", v, got)
		}
	}
	k := byName["hosts"].Guards[0].Keys
	if k == nil {
		t.Fatal("hosts: no keys")
	}
	type top struct {
		Key, State string
		Refused    uint64
	}
	var got []top
	for _, x := range k.Top {
		got = append(got, top{x.Key, x.State, x.Refused})
	}
	if diff := cmp.Diff([]top{{"a.example", "open", 2}}, got); diff != "" || k.Keys != 2 || k.Open != 1 {
		t.Errorf("hosts: %d keys, %d open; top keys mismatch (-want +got):\n%s", k.Keys, k.Open, diff)
	}
	if q := byName["quota"]; q.State != "local" || q.Guards[0].State != "local" {
		t.Errorf("quota: tile state %q, guard state %q; want the guard's own state local on both", q.State, q.Guards[0].State)
	}
}
