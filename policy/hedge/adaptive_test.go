package hedge_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/hedge"
)

// delayOf returns when the second attempt of a call through p starts, for
// a call whose first attempt never answers in time: p's delay now.
func delayOf(t *testing.T, p resilience.Policy[int]) time.Duration {
	t.Helper()
	start := time.Now()
	var second time.Duration
	var n atomic.Int32
	_, err := p.Do(context.Background(), func(ctx context.Context) (int, error) {
		if n.Add(1) == 1 {
			<-ctx.Done() // the first attempt hangs until the hedge wins
			return 0, ctx.Err()
		}
		second = time.Since(start)
		return 1, nil
	})
	if err != nil {
		t.Fatalf("probe call: %v", err)
	}
	return second
}

// calls makes n calls through p, one after the other; every attempt, a
// hedge as much as a first one, takes lat(), drawn afresh.
func calls(p resilience.Policy[int], n int, lat func() time.Duration) {
	for range n {
		_, _ = p.Do(context.Background(), func(ctx context.Context) (int, error) {
			select {
			case <-time.After(lat()):
				return 1, nil
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		})
	}
}

// uniform returns latencies drawn uniformly from [scale, 100·scale], in
// steps of scale, from a seeded source (safe for the race's goroutines).
func uniform(seed uint64, scale time.Duration) func() time.Duration {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 1))
	return func() time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return time.Duration(1+rng.IntN(100)) * scale
	}
}

// The delay follows the 95th percentile of the policy's own attempts: New's
// delay until 100 attempts are in, then their p95, and it moves with the
// dependency's latency.
func TestQuantileDelayFollowsTheLatency(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		p := hedge.New[int](time.Second, hedge.WithQuantile(0.95))
		if got := delayOf(t, p); got != time.Second {
			t.Fatalf("before any attempt: delay %v, want New's 1s", got)
		}
		// Attempts of 1 to 100ms: the p95 is 95ms. Slow first attempts
		// lose to their hedge and count with the time they ran, a lower
		// bound: the estimate is a little low.
		calls(p, 1100, uniform(1, time.Millisecond))
		got := delayOf(t, p)
		t.Logf("attempts of 1-100ms: delay %v", got)
		if got < 85*time.Millisecond || got > 100*time.Millisecond {
			t.Fatalf("after 1100 calls of 1-100ms: delay %v, want about 95ms", got)
		}
		// The dependency becomes three times slower: the hedges' own
		// latencies show it.
		calls(p, 1100, uniform(2, 3*time.Millisecond))
		got = delayOf(t, p)
		t.Logf("then 3-300ms: delay %v", got)
		if got < 255*time.Millisecond || got > 300*time.Millisecond {
			t.Fatalf("after 1100 calls of 3-300ms: delay %v, want about 285ms", got)
		}
		// And faster again.
		calls(p, 1100, uniform(3, time.Millisecond))
		got = delayOf(t, p)
		t.Logf("then 1-100ms again: delay %v", got)
		if got < 85*time.Millisecond || got > 100*time.Millisecond {
			t.Fatalf("after 1100 more calls of 1-100ms: delay %v, want about 95ms", got)
		}
	})
}

func TestQuantileDelayBounds(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		for _, tc := range []struct {
			min, max, want time.Duration
		}{
			{0, 50 * time.Millisecond, 50 * time.Millisecond},
			{200 * time.Millisecond, resilience.Off, 200 * time.Millisecond},
			{200 * time.Millisecond, 300 * time.Millisecond, 200 * time.Millisecond},
		} {
			opts := []hedge.Option{hedge.WithQuantile(0.95), hedge.WithMaxDelay(tc.max)}
			if tc.min > 0 {
				opts = append(opts, hedge.WithMinDelay(tc.min))
			}
			p := hedge.New[int](time.Second, opts...)
			calls(p, 300, uniform(4, time.Millisecond))
			if got := delayOf(t, p); got != tc.want {
				t.Errorf("MinDelay %v, MaxDelay %v, latencies 1-100ms: delay %v, want %v", tc.min, tc.max, got, tc.want)
			}
		}
	})
}

// With a budget, a dependency slow for every call gets hedges for at most
// Budget of the calls (plus the budget's burst), not for all of them.
func TestBudgetCapsHedges(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		for _, tc := range []struct {
			budget float64
			max    int
		}{{0, 1000}, {0.1, 0.1*1000 + 1}, {0.02, 0.02*1000 + 1}} {
			opts := []hedge.Option{hedge.WithMaxHedges(3)}
			if tc.budget > 0 {
				opts = append(opts, hedge.WithBudget(tc.budget))
			}
			p := hedge.New[int](10*time.Millisecond, opts...)
			var attempts atomic.Int64
			for range 1000 {
				var n atomic.Int32
				_, _ = p.Do(context.Background(), func(ctx context.Context) (int, error) {
					attempts.Add(1)
					d := time.Second // every first attempt is slow
					if n.Add(1) > 1 {
						d = time.Millisecond
					}
					select {
					case <-time.After(d):
						return 1, nil
					case <-ctx.Done():
						return 0, ctx.Err()
					}
				})
			}
			hedges := int(attempts.Load()) - 1000
			if tc.budget == 0 && hedges != 1000 || tc.budget > 0 && hedges > tc.max {
				t.Errorf("Budget %v: %d hedges for 1000 slow calls, want at most %d", tc.budget, hedges, tc.max)
			}
			t.Logf("Budget %v: %d hedges for 1000 slow calls", tc.budget, hedges)
		}
	})
}

func TestQuantileName(t *testing.T) {
	for q, want := range map[float64]string{0.95: "hedge(p95)", 0.5: "hedge(p50)", 0.999: "hedge(p99.9)"} {
		if got := fmt.Sprint(hedge.New[int](time.Second, hedge.WithQuantile(q))); got != want {
			t.Errorf("WithQuantile(%v): %s, want %s", q, got, want)
		}
	}
}
