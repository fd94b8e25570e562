package adaptive_test

import (
	"math"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// win is a window of 100 successful calls at latency, against a baseline
// of 10ms, with the limit in use.
func win(latency time.Duration, limit float64) adaptive.Window {
	return adaptive.Window{Latency: latency, Baseline: 10 * time.Millisecond, Successes: 100, MaxInFlight: int(limit), Duration: time.Second}
}

func TestGradient2(t *testing.T) {
	g := adaptive.Gradient2{}
	tests := []struct {
		name  string
		limit float64
		w     adaptive.Window
		want  float64
	}{
		// Tolerance 1.1 and Smoothing 0.2 (the defaults) but where named.
		{"no queueing: grows by a fifth of √limit", 100, win(10*time.Millisecond, 100), 102},
		{"at the tolerance: still no queueing", 100, win(11*time.Millisecond, 100), 102},
		{"a small limit grows by one at least", 4, win(10*time.Millisecond, 4), 5},
		{"Tolerance 1.5, gradient 0.75: the cut smoothed by 0.2 + 0.8 × 0.5", 100, win(20*time.Millisecond, 100), 85},
		{"gradient floored at 0.5: the whole cut", 100, win(time.Second, 100), 50},
		{"half the calls failed: gradient 0.75", 100, adaptive.Window{Latency: 10 * time.Millisecond, Baseline: 10 * time.Millisecond, Successes: 50, Drops: 50}, 85},
		{"failures only: gradient 0.5", 100, adaptive.Window{Drops: 5}, 50},
		{"nothing ended", 100, adaptive.Window{Refused: 7}, 100},
		{"no baseline yet: no queueing", 100, adaptive.Window{Latency: time.Second, Successes: 10}, 102},
		{"Tolerance 1 and Smoothing 1: the full gradient", 100, win(20*time.Millisecond, 100), 50},
		{"Tolerance 1.6 and Smoothing 1: the full gradient, 0.8", 100, win(20*time.Millisecond, 100), 80},
	}
	for _, tt := range tests {
		alg := g
		switch tt.name {
		case "Tolerance 1.5, gradient 0.75: the cut smoothed by 0.2 + 0.8 × 0.5":
			alg = adaptive.Gradient2{Tolerance: 1.5}
		case "Tolerance 1 and Smoothing 1: the full gradient":
			alg = adaptive.Gradient2{Tolerance: 1, Smoothing: 1}
		case "Tolerance 1.6 and Smoothing 1: the full gradient, 0.8":
			alg = adaptive.Gradient2{Tolerance: 1.6, Smoothing: 1}
		}
		if got := alg.Next(tt.limit, tt.w); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: Next(%v, %+v) = %v, want %v", tt.name, tt.limit, tt.w, got, tt.want)
		}
	}
}

// With the gradient near 0.8, Gradient2Limit's formula, limit × gradient
// + queue headroom, rises for every limit below (headroom / 0.2)² and
// lets a limit climb without end once the baseline drifts
// (Netflix/concurrency-limits PR 134). Here a gradient below 1 only ever
// lowers the limit, whatever the limit.
func TestGradient2NeverGrowsWhileQueueing(t *testing.T) {
	for _, grad := range []float64{0.6, 0.79, 0.8, 0.81, 0.95, 0.999} {
		lat := time.Duration(1.1 / grad * float64(10*time.Millisecond)) // Tolerance × Baseline / Latency = grad
		for limit := 1.0; limit <= 2000; limit *= 1.1 {
			if got := (adaptive.Gradient2{}).Next(limit, win(lat, limit)); got >= limit {
				t.Fatalf("gradient %v, limit %v: Next = %v, want it below the limit", grad, limit, got)
			}
		}
	}
}

// over returns the latency at which the baseline of 10ms is the share
// part of it.
func over(part float64) time.Duration { return time.Duration(float64(10*time.Millisecond) / part) }

func TestVegas(t *testing.T) {
	tests := []struct {
		name  string
		limit float64
		w     adaptive.Window
		want  float64
	}{
		// limit 100: log10 = 2; alpha = min(3·log, limit/15) = 6, beta =
		// 12; queue = 100 × (1 − 10ms/latency).
		{"queue 0: grows by 2·log", 100, win(10*time.Millisecond, 100), 104},
		{"queue 2, below alpha/2: grows by 2·log", 100, win(over(0.98), 100), 104},
		{"queue 4, below alpha: grows by log", 100, win(over(0.96), 100), 102},
		{"queue 9, between alpha and beta: holds", 100, win(over(0.91), 100), 100},
		{"queue 20, above beta: falls to 80 + the middle of [alpha, beta]", 100, win(12500*time.Microsecond, 100), 89},
		{"a failure: falls by log", 100, adaptive.Window{Latency: 10 * time.Millisecond, Baseline: 10 * time.Millisecond, Successes: 9, Drops: 1}, 98},
		{"limit 5: log and alpha are at least 1", 5, win(10*time.Millisecond, 5), 7},
		{"nothing ended", 100, adaptive.Window{Refused: 3}, 100},
	}
	for _, tt := range tests {
		if got := (adaptive.Vegas{}).Next(tt.limit, tt.w); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: Next(%v, %+v) = %v, want %v", tt.name, tt.limit, tt.w, got, tt.want)
		}
	}
}

func TestAIMD(t *testing.T) {
	tests := []struct {
		name  string
		a     adaptive.AIMD
		limit float64
		w     adaptive.Window
		want  float64
	}{
		{"healthy: one more", adaptive.AIMD{}, 50, win(11*time.Millisecond, 50), 51},
		{"slow: cut by a tenth", adaptive.AIMD{}, 50, win(12*time.Millisecond, 50), 45},
		{"queueing deeper than a tenth: cut to the tolerance", adaptive.AIMD{Tolerance: 2}, 50, win(25*time.Millisecond, 50), 40},
		{"queueing far deeper: cut by half at most", adaptive.AIMD{}, 50, win(time.Second, 50), 25},
		{"a failure: cut", adaptive.AIMD{}, 50, adaptive.Window{Latency: 10 * time.Millisecond, Baseline: 10 * time.Millisecond, Successes: 99, Drops: 1}, 45},
		{"own Tolerance and Backoff", adaptive.AIMD{Tolerance: 3, Backoff: 0.5}, 50, win(31*time.Millisecond, 50), 25},
		{"own Tolerance, within it", adaptive.AIMD{Tolerance: 3}, 50, win(30*time.Millisecond, 50), 51},
		{"nothing ended", adaptive.AIMD{}, 50, adaptive.Window{}, 50},
	}
	for _, tt := range tests {
		if got := tt.a.Next(tt.limit, tt.w); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: Next(%v, %+v) = %v, want %v", tt.name, tt.limit, tt.w, got, tt.want)
		}
	}
}
