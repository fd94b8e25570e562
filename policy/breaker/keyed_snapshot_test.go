package breaker_test

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/internal/snapview"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

func TestKeyedSnapshot(t *testing.T) {
	k := breaker.NewKeyed[string](breaker.WithName("hosts"), breaker.WithThreshold(1), breaker.WithMaxKeys(3),
		breaker.WithClock(clock.NewFake()))
	a := k.Breaker("a")
	a.Record(true) // trips
	for range 2 {
		_, _ = a.Allow()
	}
	b := k.Breaker("b")
	b.ForceOpen()
	_, _ = b.Allow()
	k.Breaker("c")
	if k.Name() != "hosts" {
		t.Errorf("Name() = %q, want hosts", k.Name())
	}
	want := snapview.View{Kind: breaker.Kind, Name: "hosts", Refused: 3,
		Values: map[string]float64{"keys": 3, "max_keys": 3, "open_keys": 2, "half_open_keys": 0, "evicted": 0, "evicted_not_closed": 0},
		Keys: &telemetry.KeySummary{Keys: 3, MaxKeys: 3, Open: 2, Top: []telemetry.KeyStat{
			{Key: "a", State: telemetry.StateOpen, Refused: 2}, {Key: "b", State: telemetry.StateOpen, Refused: 1}}}}
	if diff := cmp.Diff(want, snapview.Of(k.Snapshot())); diff != "" {
		t.Errorf("Snapshot mismatch (-want +got):\n%s", diff)
	}
	reg := telemetry.NewRegistry()
	if err := reg.Register(k); err != nil {
		t.Fatalf("Register = %v", err)
	}
}

// Snapshot while keys come, go and trip on other goroutines: no race, no
// deadlock with the breakers' transitions (run with -race).
func TestKeyedSnapshotConcurrent(t *testing.T) {
	k := breaker.NewKeyed[int](breaker.WithName("hosts"), breaker.WithThreshold(1), breaker.WithMaxKeys(8))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 2000 {
			b := k.Breaker(i % 20)
			if i%3 == 0 {
				b.Record(true)
			}
			_, _ = b.Allow()
		}
	}()
	for range 200 {
		s := k.Snapshot()
		if s.Keys == nil || s.Keys.Keys > 8 || len(s.Keys.Top) > telemetry.TopKeys {
			t.Fatalf("Snapshot keys %+v, want at most 8 keys and %d top", s.Keys, telemetry.TopKeys)
		}
	}
	<-done
}

// A key whose breaker is half-open counts in half_open_keys, not in
// open_keys.
func TestKeyedSnapshotCountsHalfOpenKeys(t *testing.T) {
	f := clock.NewFake()
	k := breaker.NewKeyed[string](breaker.WithThreshold(1), breaker.WithCooldown(time.Minute), breaker.WithClock(f))
	k.Breaker("a").Record(true)
	k.Breaker("b").Record(true)
	f.Advance(time.Minute)
	k.Breaker("a").State() // half-open now
	f.Advance(time.Second)
	k.Breaker("c").Record(true) // open
	v := snapview.Of(k.Snapshot()).Values
	if v["half_open_keys"] != 2 || v["open_keys"] != 1 {
		t.Errorf("half_open_keys %v, open_keys %v; want 2 and 1", v["half_open_keys"], v["open_keys"])
	}
}
