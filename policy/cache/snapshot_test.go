package cache_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/snapview"
	"github.com/f0b5b96b/resilience/policy/cache"
	"github.com/f0b5b96b/resilience/telemetry"
)

// A cache is a telemetry.Guard: its Snapshot is its Stats, named, and it
// registers under its name.
func TestSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewFake()
		c := cache.New[string](time.Minute, cache.WithClock(clk), cache.WithName("users"))
		if c.Name() != "users" {
			t.Fatalf("Name() = %q, want users", c.Name())
		}
		p, dep := c.Policy(), &counter{}
		for _, k := range []string{"a", "a", "b"} {
			v, _, err := get(t, p, dep.op, k)
			if err != nil || v == "" {
				t.Fatalf("get(%s) = %q, %v", k, v, err)
			}
		}
		synctest.Wait()
		want := snapview.View{Kind: cache.Kind, Name: "users", Values: map[string]float64{
			"hits": 1, "misses": 2, "coalesced": 0, "stale": 0, "evictions": 0, "refreshes": 0,
			"refresh_failures": 0, "entries": 2, "bytes": 0,
		}}
		if diff := cmp.Diff(want, snapview.Of(c.Snapshot())); diff != "" {
			t.Errorf("Snapshot mismatch (-want +got):\n%s", diff)
		}
		reg := telemetry.NewRegistry()
		if err := reg.Register(c); err != nil {
			t.Fatalf("Register = %v", err)
		}
		if err := reg.Register(cache.New[int](time.Minute)); !errors.Is(err, telemetry.ErrNoName) {
			t.Errorf("Register of an unnamed cache = %v, want ErrNoName", err)
		}
	})
}
