package ratelimit_test

import (
	"fmt"
	"github.com/f0b5b96b/resilience/internal/snapview"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/telemetry"
)

func TestKeyedSnapshot(t *testing.T) {
	k := ratelimit.NewKeyed[int](10, 2, ratelimit.WithName("users"), ratelimit.WithMaxKeys(10), ratelimit.WithClock(clock.NewFake()))
	// Key i takes 2+i calls on a bucket of 2: its bucket is empty, and i
	// were refused; the top five are keys 7 to 3.
	for i := range 8 {
		for range 2 + i {
			_ = k.Allow(i)
		}
	}
	_ = k.Allow(8) // one token left
	if k.Name() != "users" {
		t.Errorf("Name() = %q, want users", k.Name())
	}
	var top []telemetry.KeyStat
	for i := 7; i > 2; i-- {
		top = append(top, telemetry.KeyStat{Key: fmt.Sprint(i), Refused: uint64(i)})
	}
	want := snapview.View{Kind: ratelimit.Kind, Name: "users", Refused: 28,
		Values: map[string]float64{"rate": 10, "burst": 2, "keys": 9, "max_keys": 10, "empty_keys": 8},
		Keys:   &telemetry.KeySummary{Keys: 9, MaxKeys: 10, Open: 8, Top: top}}
	if diff := cmp.Diff(want, snapview.Of(k.Snapshot())); diff != "" {
		t.Errorf("Snapshot mismatch (-want +got):\n%s", diff)
	}
	reg := telemetry.NewRegistry()
	if err := reg.Register(k); err != nil {
		t.Fatalf("Register = %v", err)
	}
}

// Snapshot while keys come and go on other goroutines: no race (run with
// -race), and the summary stays bounded.
func TestKeyedSnapshotConcurrent(t *testing.T) {
	k := ratelimit.NewKeyed[int](1, 1, ratelimit.WithName("users"), ratelimit.WithMaxKeys(8))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 2000 {
			_ = k.Allow(i % 20)
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

// The top keys are the five with the most refusals, whatever the order
// the keys were last used in (the order Snapshot walks them in, from the
// most recently used).
func TestKeyedSnapshotTopKeysInAnyOrder(t *testing.T) {
	for _, refusals := range [][]int{
		{1, 2, 3, 4, 5, 6, 7}, // the keys used in this order: walked with the most refusals first
		{7, 6, 5, 4, 3, 2, 1}, // walked with the fewest first
		{3, 7, 1, 6, 2, 5, 4}, // mixed
	} {
		k := ratelimit.NewKeyed[string](10, 1, ratelimit.WithClock(clock.NewFake()))
		for _, n := range refusals {
			for range 1 + n { // the first call takes the token; the others are refused
				_ = k.Allow(fmt.Sprint("k", n))
			}
		}
		var want []telemetry.KeyStat
		for n := 7; n > 2; n-- {
			want = append(want, telemetry.KeyStat{Key: fmt.Sprint("k", n), Refused: uint64(n)})
		}
		if diff := cmp.Diff(want, k.Snapshot().Keys.Top); diff != "" {
			t.Errorf("refusals %v: Top mismatch (-want +got):\n%s", refusals, diff)
		}
	}
}

// A Keyed without refill (Rate Off) reports a rate of 0, as Limiter.Rate
// does, not -1.
func TestKeyedSnapshotRateOff(t *testing.T) {
	k := ratelimit.NewKeyed[string](resilience.Off, 2, ratelimit.WithClock(clock.NewFake()))
	_ = k.Allow("a")
	got := snapview.Of(k.Snapshot()).Values
	if got["rate"] != 0 || got["burst"] != 2 || got["keys"] != 1 {
		t.Errorf("Snapshot values = %v, want rate 0, burst 2, keys 1", got)
	}
}
