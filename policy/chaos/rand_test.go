package chaos_test

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/chaos"
)

// injections decides n calls, on goroutines goroutines, with an injector of
// rate 0.3 seeded with seed, and returns the decisions (in order, with one
// goroutine) and how many got chaos.
func injections(seed uint64, n, goroutines int) (decisions []bool, hits int) {
	in := chaos.NewInjector(0.3, chaos.WithRand(rand.New(rand.NewPCG(seed, 0))))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range n / goroutines {
				got := in.Inject()
				mu.Lock()
				decisions = append(decisions, got)
				if got {
					hits++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return decisions, hits
}

// The same seed gives chaos to the same calls; another seed to others.
func TestWithRandSameSeedSameChaos(t *testing.T) {
	a, _ := injections(1, 400, 1)
	b, _ := injections(1, 400, 1)
	c, _ := injections(2, 400, 1)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("same seed, decisions mismatch (-first +second):\n%s", diff)
	}
	if cmp.Equal(a, c) {
		t.Fatal("seeds 1 and 2 gave chaos to the same calls")
	}
}

// Calls on many goroutines share the seeded source (a bare *rand.Rand
// would race under -race) and between them take the seed's numbers: as
// many calls get chaos as with one goroutine.
func TestWithRandIsSafeForSimultaneousCalls(t *testing.T) {
	_, one := injections(3, 800, 1)
	_, many := injections(3, 800, 8)
	if one != many {
		t.Fatalf("%d calls got chaos on 8 goroutines, %d on one; the same seed's draws should give the same count", many, one)
	}
}

func TestWithRandPanics(t *testing.T) {
	for _, tt := range []struct {
		name, want string
		f          func()
	}{
		{"nil", "chaos: WithRand(nil): the source must not be nil; leave the option out for math/rand/v2's Float64",
			func() { chaos.WithRand(nil) }},
		{"nil option", "chaos: NewInjector option must not be nil",
			func() { chaos.NewInjector(0.5, nil) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != tt.want {
					t.Fatalf("panic = %v, want %q", r, tt.want)
				}
			}()
			tt.f()
		})
	}
}
