package retry_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/retry"
)

var errAlways = errors.New("always")

func failing(context.Context) (int, error) { return 0, errAlways }

// waitsWithSeed runs executions of a retry with full jitter and
// WithRand(seed) on goroutines executions at once, inside a synctest
// bubble (the waits are the bubble's virtual time), and returns every wait.
func waitsWithSeed(t *testing.T, seed uint64, goroutines int) []time.Duration {
	var mu sync.Mutex
	var got []time.Duration
	synctest.Test(t, func(t *testing.T) {
		p := retry.New[int](
			retry.WithAttempts(5),
			retry.WithBackoff(backoff.Constant(time.Second).WithJitter(backoff.Full)),
			retry.WithRand(rand.New(rand.NewPCG(seed, 0))),
			retry.WithOnRetry(func(_ int, _ error, d time.Duration) {
				mu.Lock()
				got = append(got, d)
				mu.Unlock()
			}),
		)
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() { _, _ = p.Do(context.Background(), failing) })
		}
		wg.Wait()
	})
	return got
}

// The same seed gives the same waits, wait for wait; another seed others.
func TestWithRandSameSeedSameWaits(t *testing.T) {
	a, b, c := waitsWithSeed(t, 1, 1), waitsWithSeed(t, 1, 1), waitsWithSeed(t, 2, 1)
	if len(a) != 4 {
		t.Fatalf("%d waits, want 4 (5 attempts)", len(a))
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("same seed, waits mismatch (-first +second):\n%s", diff)
	}
	if slices.Equal(a, c) {
		t.Fatalf("seeds 1 and 2 gave the same waits %v", a)
	}
}

// Executions on many goroutines share the source (a bare *rand.Rand would
// race under -race) and between them draw the seed's numbers: the same
// waits, in some order, as one goroutine running them all.
func TestWithRandIsSafeForSimultaneousExecutions(t *testing.T) {
	const goroutines = 8
	got := waitsWithSeed(t, 3, goroutines)
	var want []time.Duration
	s := backoff.Constant(time.Second).WithJitter(backoff.Full).WithRand(rand.New(rand.NewPCG(3, 0))).Start()
	for range goroutines * 4 {
		want = append(want, s.Next())
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("waits mismatch (-want +got):\n%s", diff)
	}
}

func TestWithRandNilPanics(t *testing.T) {
	defer func() {
		want := "retry: WithRand(nil): the source must not be nil; leave the option out for the Backoff's own (math/rand/v2's by default)"
		if r := recover(); r != want {
			t.Fatalf("panic = %v, want %q", r, want)
		}
	}()
	retry.WithRand(nil)
}
