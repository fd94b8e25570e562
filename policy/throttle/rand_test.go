package throttle_test

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/throttle"
)

// refusals sends n requests that all fail through a throttler seeded with
// seed, on goroutines goroutines, and returns which were refused (in order,
// with one goroutine) and how many.
func refusals(seed uint64, n, goroutines int) (pattern []bool, refused int) {
	th := throttle.New(throttle.WithClock(clock.NewFake()), throttle.WithRand(rand.New(rand.NewPCG(seed, 0))))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range n / goroutines {
				p, err := th.Allow()
				mu.Lock()
				pattern = append(pattern, err != nil)
				if err != nil {
					refused++
				}
				mu.Unlock()
				if err == nil {
					p.Done(errors.New("503"))
				}
			}
		})
	}
	wg.Wait()
	return pattern, refused
}

// The same seed gives the same refusals, request for request; another seed
// others.
func TestWithRandSameSeedSameRefusals(t *testing.T) {
	a, _ := refusals(1, 500, 1)
	b, _ := refusals(1, 500, 1)
	c, _ := refusals(2, 500, 1)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("same seed, refusals mismatch (-first +second):\n%s", diff)
	}
	if cmp.Equal(a, c) {
		t.Fatal("seeds 1 and 2 refused the same requests")
	}
}

// Requests on many goroutines share the seeded source: under -race a bare
// *rand.Rand would race.
func TestWithRandIsSafeForSimultaneousRequests(t *testing.T) {
	_, refused := refusals(3, 800, 8)
	if refused == 0 {
		t.Fatal("no request refused in front of a dependency that always fails")
	}
}

func TestWithRandNilPanics(t *testing.T) {
	defer func() {
		want := "throttle: WithRand(nil): the source must not be nil; leave the option out for math/rand/v2's Float64"
		if r := recover(); r != want {
			t.Fatalf("panic = %v, want %q", r, want)
		}
	}()
	throttle.WithRand(nil)
}
