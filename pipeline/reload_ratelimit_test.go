package pipeline_test

import (
	"math"
	"testing"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/pipeline"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

// A rate limiter reloaded to an infinite rate with a burst of 0, and back
// to a finite rate, takes each live, state and all: the settings change in
// an order that keeps a burst >= 1 with every finite rate.
func TestReloadRateLimitToAnInfiniteRateAndBack(t *testing.T) {
	s := pipeline.NewSet[int](pipeline.WithClock(clock.NewFake()))
	mustApply(t, s, []byte(`{"guards": {"l": {"kind": "ratelimit", "config": {"Rate": 1, "Burst": 1}}}}`))
	l := s.Guard("l").(*ratelimit.Limiter)
	for _, tc := range []struct {
		doc   string
		rate  float64
		burst int
	}{
		{`{"guards": {"l": {"kind": "ratelimit", "config": {"Rate": "+Inf", "Burst": 0}}}}`, math.Inf(1), 0},
		{`{"guards": {"l": {"kind": "ratelimit", "config": {"Rate": 2, "Burst": 3}}}}`, 2, 3},
		{`{"guards": {"l": {"kind": "ratelimit", "config": {"Rate": 2, "Burst": 5}}}}`, 2, 5},
		{`{"guards": {"l": {"kind": "ratelimit", "config": {"Rate": 4, "Burst": 5}}}}`, 4, 5},
	} {
		mustApply(t, s, []byte(tc.doc))
		if s.Guard("l") != l {
			t.Fatalf("%s: the limiter was replaced", tc.doc)
		}
		if l.Rate() != tc.rate || l.Burst() != tc.burst {
			t.Errorf("%s: rate, burst = %v, %d; want %v, %d", tc.doc, l.Rate(), l.Burst(), tc.rate, tc.burst)
		}
	}
}
