package ratelimit_test

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

// The worst case of NewKeyed's doc: with more distinct keys in a cycle
// than MaxKeys, every key is evicted before it comes back, so each call
// finds a full bucket and the limit does not hold at all.
func TestKeyedCycleOfMoreKeysThanMaxKeysIsNotLimited(t *testing.T) {
	fake := clock.NewFake() // time stands still: no refill at all
	k := ratelimit.NewKeyed[int](ratelimit.Every(time.Hour), 1, ratelimit.WithClock(fake), ratelimit.WithMaxKeys(4))
	const calls, keys = 160_000, 6
	allowed := 0
	for i := range calls {
		if k.Allow(i % keys) {
			allowed++
		}
	}
	if allowed != calls {
		t.Fatalf("%d keys in a cycle, MaxKeys 4, burst 1, no refill: %d of %d calls allowed, want all", keys, allowed, calls)
	}
	// With MaxKeys at least the keys of the cycle, the limit holds: one
	// call per key, its burst.
	k = ratelimit.NewKeyed[int](ratelimit.Every(time.Hour), 1, ratelimit.WithClock(fake), ratelimit.WithMaxKeys(keys))
	allowed = 0
	for i := range calls {
		if k.Allow(i % keys) {
			allowed++
		}
	}
	if allowed != keys {
		t.Fatalf("%d keys in a cycle, MaxKeys %d: %d calls allowed, want %d", keys, keys, allowed, keys)
	}
}
