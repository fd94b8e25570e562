package breaker

import (
	"runtime"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// TestKeyedEvictionMovesABreakerTrippedBeforeItsRegroup replays the race
// between a trip and an eviction: the breaker "a" has tripped but its move
// to the list of breakers not closed waits for the Keyed's lock, held by
// the eviction. The eviction must move "a" itself and forget "b", the
// closed breaker, not "a".
func TestKeyedEvictionMovesABreakerTrippedBeforeItsRegroup(t *testing.T) {
	f := clock.NewFake()
	k := NewKeyed[string](WithClock(f), WithThreshold(1), WithCooldown(time.Second), WithMaxKeys(2))
	a := k.Breaker("a")
	k.Breaker("b")

	k.mu.Lock() // the eviction's lock, taken before the trip moves "a"
	tripped := make(chan struct{})
	go func() {
		defer close(tripped)
		a.Record(true) // stores the open state, then waits for k.mu in regroup
	}()
	for i := 0; !notClosed(a); i++ {
		if i == 1_000_000 {
			k.mu.Unlock()
			t.Fatal("a did not trip")
		}
		runtime.Gosched()
	}
	gone := within(t, "the eviction", k.evictLocked) // a bound: an eviction that never moves "a" spins
	k.mu.Unlock()
	recvWithin(t, tripped, "the trip, once the Keyed's lock is released")

	if gone != nil {
		t.Errorf("evictLocked forgot %q, a breaker not closed; want the closed b forgotten", gone.key)
	}
	if k.index.Get("a") == nil || k.index.Get("b") != nil {
		t.Errorf("after the eviction: a tracked %v, b tracked %v; want a kept and b forgotten",
			k.index.Get("a") != nil, k.index.Get("b") != nil)
	}
	if s := k.Stats(); s.Evicted != 1 || s.EvictedNotClosed != 0 {
		t.Errorf("Stats() = %+v, want 1 evicted, none not closed", s)
	}
}
