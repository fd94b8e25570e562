package adaptive_test

import (
	"math"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// TestAlgorithmsAtTheirBoundaries pins each algorithm's branches at the
// exact values where they change, with windows whose ratio Latency/Baseline
// is exact in floating point.
func TestAlgorithmsAtTheirBoundaries(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name  string
		alg   adaptive.Algorithm
		limit float64
		w     adaptive.Window
		want  float64
	}{
		// A baseline of 1ns is known: latency 3ns is 3 times it, a gradient
		// of 1.1/3, floored at 0.5: the whole cut, to half.
		{"Gradient2: a 1ns baseline counts", adaptive.Gradient2{}, 100,
			adaptive.Window{Baseline: 1, Latency: 3, Successes: 10}, 50},
		// One success is enough to measure the gradient: 1 here, so the
		// limit grows by 0.2 × √100.
		{"Gradient2: one success measures the gradient", adaptive.Gradient2{}, 100,
			adaptive.Window{Baseline: 10 * ms, Latency: 10 * ms, Successes: 1}, 102},
		// One failure of two lowers the gradient to 1 − 1/2/2 = 0.75:
		// 100 × (1 − 0.6 × 0.25), the smoothing 0.2 + 0.8 × 0.25/0.5.
		{"Gradient2: one failure lowers the gradient", adaptive.Gradient2{}, 100,
			adaptive.Window{Baseline: 10 * ms, Latency: 10 * ms, Successes: 1, Drops: 1}, 85},
		// limit 1: log is 1, alpha 1, beta 2; latency twice the baseline:
		// queue = 1 × 0.5, exactly alpha/2: grows by 2·log.
		{"Vegas: queue = alpha/2 grows by 2·log", adaptive.Vegas{}, 1,
			adaptive.Window{Baseline: 10 * ms, Latency: 20 * ms, Successes: 10}, 3},
		// limit 2: queue = 2 × 0.5 = 1, exactly alpha: holds.
		{"Vegas: queue = alpha holds", adaptive.Vegas{}, 2,
			adaptive.Window{Baseline: 10 * ms, Latency: 20 * ms, Successes: 10}, 2},
		// limit 4: queue = 4 × 0.5 = 2, exactly beta: still holds (falls
		// only above).
		{"Vegas: queue = beta holds", adaptive.Vegas{}, 4,
			adaptive.Window{Baseline: 10 * ms, Latency: 20 * ms, Successes: 10}, 4},
		// limit 8: latency 4 times the baseline: queue = 8 × 0.75 = 6,
		// above beta: 8 − 6 + (1 + 2)/2.
		{"Vegas: queue above beta falls to the served + the middle", adaptive.Vegas{}, 8,
			adaptive.Window{Baseline: 10 * ms, Latency: 40 * ms, Successes: 10}, 3.5},
		// AIMD: a latency of exactly Tolerance × baseline is not congestion.
		{"AIMD: latency = tolerance × baseline grows", adaptive.AIMD{Tolerance: 2}, 10,
			adaptive.Window{Baseline: 10 * ms, Latency: 20 * ms, Successes: 10}, 11},
	}
	for _, tt := range tests {
		if got := tt.alg.Next(tt.limit, tt.w); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: Next(%v, %+v) = %v, want %v", tt.name, tt.limit, tt.w, got, tt.want)
		}
	}
}

// TestAIMDCountsOnlyCallsThatEnded: a window with no call ended holds the
// limit whatever its latency; one success is enough to grow it, or to cut
// it when it was slow.
func TestAIMDCountsOnlyCallsThatEnded(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		w    adaptive.Window
		want float64
	}{
		{"no call ended, a latency over tolerance: holds", adaptive.Window{Baseline: 10 * ms, Latency: 100 * ms}, 10},
		{"one slow success: cut (by half at most)", adaptive.Window{Baseline: 10 * ms, Latency: 100 * ms, Successes: 1}, 5},
		{"one fast success: grows", adaptive.Window{Baseline: 10 * ms, Latency: 10 * ms, Successes: 1}, 11},
	}
	for _, tt := range tests {
		if got := (adaptive.AIMD{}).Next(10, tt.w); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: Next(10, %+v) = %v, want %v", tt.name, tt.w, got, tt.want)
		}
	}
}

// TestValidateAlgorithmBounds: each parameter of the package's algorithms
// is valid up to and including the ends of its documented range, and
// invalid just past them.
func TestValidateAlgorithmBounds(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	valid := []adaptive.Algorithm{
		adaptive.Gradient2{Tolerance: 1}, adaptive.Gradient2{Tolerance: 2}, adaptive.Gradient2{Tolerance: math.MaxFloat64},
		adaptive.Gradient2{Smoothing: 1}, adaptive.Gradient2{Smoothing: 0.5}, adaptive.Gradient2{Smoothing: math.SmallestNonzeroFloat64},
		adaptive.AIMD{Tolerance: 1}, adaptive.AIMD{Tolerance: 2}, adaptive.AIMD{Tolerance: math.MaxFloat64},
		adaptive.AIMD{Backoff: 0.5}, adaptive.AIMD{Backoff: math.SmallestNonzeroFloat64}, adaptive.AIMD{Backoff: math.Nextafter(1, 0)},
	}
	for _, a := range valid {
		if err := (adaptive.Config{Algorithm: a}).Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v, want nil", a, err)
		}
	}
	invalid := []adaptive.Algorithm{
		adaptive.Gradient2{Tolerance: math.Nextafter(1, 0)}, adaptive.Gradient2{Tolerance: inf}, adaptive.Gradient2{Tolerance: nan},
		adaptive.Gradient2{Smoothing: -0.5}, adaptive.Gradient2{Smoothing: math.Nextafter(1, 2)}, adaptive.Gradient2{Smoothing: nan},
		adaptive.AIMD{Tolerance: math.Nextafter(1, 0)}, adaptive.AIMD{Tolerance: inf}, adaptive.AIMD{Tolerance: nan},
		adaptive.AIMD{Backoff: -0.5}, adaptive.AIMD{Backoff: 1}, adaptive.AIMD{Backoff: nan},
	}
	for _, a := range invalid {
		if err := (adaptive.Config{Algorithm: a}).Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", a)
		}
	}
}
