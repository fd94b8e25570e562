package ratelimit_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

func TestKeyedBucketsAreSeparate(t *testing.T) {
	fake := clock.NewFake()
	k := ratelimit.NewKeyed[string](ratelimit.Every(time.Second), 2, ratelimit.WithClock(fake))
	for _, key := range []string{"a", "b"} {
		if got := admitted(k.Limiter(key), 3); got != 2 {
			t.Fatalf("key %q: admitted %d, want the burst of 2", key, got)
		}
	}
	fake.Advance(time.Second)
	if !k.Allow("a") || k.Allow("a") {
		t.Fatal("key a: want one token after 1s")
	}
	if b1, b2 := k.Limiter("b"), k.Limiter("b"); b1 != b2 {
		t.Fatal("Limiter(b) changed while tracked")
	}
	if got := k.Len(); got != 2 {
		t.Fatalf("Len() = %d, want 2", got)
	}
}

func TestKeyedEvictsLeastRecentlyUsed(t *testing.T) {
	fake := clock.NewFake()
	k := ratelimit.NewKeyed[int](ratelimit.Every(time.Hour), 1, ratelimit.WithClock(fake), ratelimit.WithMaxKeys(3))
	for key := range 3 {
		k.Allow(key) // 0, 1, 2 each spend their token
	}
	held := k.Limiter(0) // 0 becomes the most recently used: order 1, 2, 0
	k.Allow(3)           // forgets 1
	if got := k.Len(); got != 3 {
		t.Fatalf("Len() = %d, want 3", got)
	}
	if k.Allow(0) || k.Allow(2) {
		t.Fatal("a tracked key got a fresh bucket")
	}
	// 1 was forgotten: it comes back full, and forgets 3, now the least
	// recently used (the order was 3, 0, 2).
	if !k.Allow(1) {
		t.Fatal("the forgotten key did not start again full")
	}
	if k.Limiter(0) != held {
		t.Fatal("key 0 was forgotten, want key 3")
	}
	if got := k.Len(); got != 3 {
		t.Fatalf("Len() = %d, want 3", got)
	}
}

func TestKeyedDefaultCap(t *testing.T) {
	k := ratelimit.NewKeyed[int](1, 1)
	for key := range 10000 {
		k.Allow(key)
	}
	if got := k.Len(); got != 8192 {
		t.Fatalf("Len() = %d, want the default cap 8192", got)
	}
}

// TestKeyedStress drives a small Keyed from many goroutines with random
// keys, under -race: it never tracks more than its cap.
func TestKeyedStress(t *testing.T) {
	const maxKeys = 16
	k := ratelimit.NewKeyed[string](100, 3, ratelimit.WithMaxKeys(maxKeys))
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range 500 {
				key := fmt.Sprint(r.IntN(64))
				if r.IntN(2) == 0 {
					k.Allow(key)
				} else {
					k.Limiter(key).AllowN(2)
				}
				if n := k.Len(); n > maxKeys {
					t.Errorf("Len() = %d > %d", n, maxKeys)
					return
				}
			}
		})
	}
	waitAll(t, &wg, "the goroutines calling the Keyed")
	if got := k.Len(); got != maxKeys {
		t.Fatalf("Len() = %d, want %d", got, maxKeys)
	}
}

// Regression: a key not equal to itself (a NaN, or an interface or struct
// holding one) always missed the map: every call got a fresh, full bucket
// (never limited), and the map grew past MaxKeys without bound, since
// eviction deleted by key and missed too. Such keys now share one bucket,
// and the cap holds.
func TestKeyedKeysNotEqualToThemselves(t *testing.T) {
	nan := math.NaN()
	type pair struct {
		name string
		x    float64
	}
	check := func(t *testing.T, name string, allow func(i int) bool, size func() int, other func(i int)) {
		t.Helper()
		admittedNaN := 0
		for i := range 100 {
			if allow(i) {
				admittedNaN++
			}
			other(i) // interleave ordinary keys, to make evictions
			if n := size(); n > 3 {
				t.Fatalf("%s: Len() = %d after %d calls, past MaxKeys 3", name, n, i+1)
			}
		}
		if admittedNaN > 2 {
			t.Errorf("%s: %d of 100 calls admitted at rate 0, burst 1; want them to share one bucket", name, admittedNaN)
		}
	}
	opts := []ratelimit.Option{ratelimit.WithMaxKeys(3), ratelimit.WithClock(clock.NewFake())}
	f := ratelimit.NewKeyed[float64](resilience.Off, 1, opts...)
	check(t, "float64", func(int) bool { return f.Allow(nan) }, f.Len, func(i int) { f.Allow(float64(i % 2)) })
	a := ratelimit.NewKeyed[any](resilience.Off, 1, opts...)
	check(t, "any", func(i int) bool { return a.Allow(any(nan)) }, a.Len, func(i int) { a.Allow(i % 2) })
	s := ratelimit.NewKeyed[pair](resilience.Off, 1, opts...)
	check(t, "struct", func(i int) bool { return s.Allow(pair{"alice", nan}) }, s.Len, func(i int) { s.Allow(pair{"bob", float64(i % 2)}) })
	// Struct keys holding NaN share one bucket whatever their other fields.
	if s.Allow(pair{"carol", nan}) {
		t.Error("struct: a key holding NaN got a fresh bucket")
	}
	// The shared bucket is evicted like any other and comes back full.
	f2 := ratelimit.NewKeyed[float64](resilience.Off, 1, opts...)
	f2.Allow(nan)
	for i := range 3 {
		f2.Allow(float64(i))
	}
	if !f2.Allow(nan) {
		t.Error("float64: the NaN bucket, once evicted, did not come back full")
	}
	if n := f2.Len(); n != 3 {
		t.Errorf("float64: Len() = %d, want 3", n)
	}
}
