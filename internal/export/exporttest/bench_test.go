package exporttest_test

import (
	"context"
	"errors"
	"flag"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// benchmark runs f as testing.Benchmark does, with -test.benchtime set to
// benchtime (Nx: N iterations) for the run.
func benchmark(t *testing.T, benchtime string, f func(b *testing.B)) testing.BenchmarkResult {
	t.Helper()
	old := flag.Lookup("test.benchtime").Value.String()
	if err := flag.Set("test.benchtime", benchtime); err != nil {
		t.Fatal(err)
	}
	defer flag.Set("test.benchtime", old)
	return testing.Benchmark(f)
}

// counting is a layer that counts the calls through it, and fails them
// with err when err is set.
func counting(n *atomic.Int64, err error) resilience.Policy[int] {
	return resilience.New("count", func(ctx context.Context, next resilience.Next[int]) (int, error) {
		n.Add(1)
		if err != nil {
			return 0, err
		}
		return next.Call(ctx)
	})
}

// TestBenchDo: BenchDo calls OK through p once an iteration, and fails
// the benchmark when a call fails.
func TestBenchDo(t *testing.T) {
	var n atomic.Int64
	r := benchmark(t, "7x", func(b *testing.B) { exporttest.BenchDo(b, counting(&n, nil)) })
	if r.N != 7 || n.Load() != 7 {
		t.Errorf("N = %d, calls = %d, want 7 and 7", r.N, n.Load())
	}
	n.Store(0)
	if r := benchmark(t, "7x", func(b *testing.B) { exporttest.BenchDo(b, counting(&n, errors.New("down"))) }); r.N != 0 || n.Load() != 1 {
		t.Errorf("a failing call: N = %d, calls = %d, want 0 (failed) after 1 call", r.N, n.Load())
	}
}

// TestBenchBreakerClosed: the sub-benchmark "exported" calls OK through
// the policy given, once an iteration, and a failing call fails it.
func TestBenchBreakerClosed(t *testing.T) {
	var n atomic.Int64
	benchmark(t, "5x", func(b *testing.B) { exporttest.BenchBreakerClosed(b, counting(&n, nil)) })
	if n.Load() != 5 {
		t.Errorf("calls through the exported policy = %d, want 5", n.Load())
	}
	n.Store(0)
	var failed bool
	benchmark(t, "5x", func(b *testing.B) {
		exporttest.BenchBreakerClosed(b, counting(&n, errors.New("down")))
		failed = b.Failed()
	})
	if !failed || n.Load() != 1 {
		t.Errorf("a failing call: failed %v after %d calls, want true after 1", failed, n.Load())
	}
}

// TestBenchObserve: the sub-benchmarks observe a refusal and a wait, once
// an iteration each.
func TestBenchObserve(t *testing.T) {
	seen := map[telemetry.Type]int{}
	obs := telemetry.ObserverFunc(func(e telemetry.Event) { seen[e.Type]++ })
	benchmark(t, "3x", func(b *testing.B) { exporttest.BenchObserve(b, obs, errors.New("down")) })
	want := map[telemetry.Type]int{exporttest.Refused().Type: 3, exporttest.Waiting(nil).Type: 3}
	for typ, c := range want {
		if seen[typ] != c {
			t.Errorf("%v observed %d times, want %d (all: %v)", typ, seen[typ], c, seen)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("observed %v, want only %v", seen, want)
	}
}

// TestBenchBreakerClosedPaired: each iteration is a block of 256 calls
// bare then 256 through the exported policy; the metrics are the median
// time of a call of each and of their ratio, with ns/op 0. The exported
// policy here spins for at least 500ns a call, so its median is at least
// that. More iterations than the 4096 pairs
// kept make the kept ones a ring.
func TestBenchBreakerClosedPaired(t *testing.T) {
	const spin = 500 * time.Nanosecond
	var n atomic.Int64
	slow := resilience.New("slow", func(ctx context.Context, next resilience.Next[int]) (int, error) {
		n.Add(1)
		for start := time.Now(); time.Since(start) < spin; {
		}
		return next.Call(ctx)
	})
	const iters = 50
	r := benchmark(t, "50x", func(b *testing.B) { exporttest.BenchBreakerClosedPaired(b, slow) })
	if n.Load() != iters*256 {
		t.Errorf("calls through the exported policy = %d, want %d", n.Load(), iters*256)
	}
	// The bounds below are far apart (a call is 10ns to a few µs here, the
	// race detector's included): they tell a time from a sum or product
	// of times, not fast from slow.
	exp, bare, ratio := r.Extra["exported-ns/call"], r.Extra["bare-ns/call"], r.Extra["exported/bare"]
	if exp < float64(spin) || exp > 100e3 {
		t.Errorf("exported-ns/call = %v, want at least %v (each call spins that long) and below 100µs", exp, float64(spin))
	}
	if bare <= 0 || bare > 100e3 {
		t.Errorf("bare-ns/call = %v, want above 0 and below 100µs", bare)
	}
	if q := exp / bare; ratio < q/10 || ratio > q*10 {
		t.Errorf("exported/bare = %v, want the median of the ratios near the ratio of the medians, %v", ratio, q)
	}
	if v, ok := r.Extra["ns/op"]; !ok || v != 0 {
		t.Errorf("ns/op = %v (reported %v), want 0 reported", v, ok)
	}
}

// spinAfter is a layer that counts its calls and, from call after on,
// spins for d in each.
func spinAfter(n *atomic.Int64, after int64, d time.Duration) resilience.Policy[int] {
	return resilience.New("spin", func(ctx context.Context, next resilience.Next[int]) (int, error) {
		if n.Add(1) > after {
			for start := time.Now(); time.Since(start) < d; {
			}
		}
		return next.Call(ctx)
	})
}

// TestBenchBreakerClosedPairedKeepsTheLastPairs: past 4096 pairs the
// medians are of the last 4096. Of 8300 iterations the exported policy
// spins 2µs a call from iteration 6000 on: 2300 of the last 4096 pairs
// (most) are slow, 2300 of all 8300 and none of the first 4096 are.
func TestBenchBreakerClosedPairedKeepsTheLastPairs(t *testing.T) {
	const spin = 2 * time.Microsecond
	var n atomic.Int64
	r := benchmark(t, "8300x", func(b *testing.B) {
		exporttest.BenchBreakerClosedPaired(b, spinAfter(&n, 6000*256, spin))
	})
	exp, bare, ratio := r.Extra["exported-ns/call"], r.Extra["bare-ns/call"], r.Extra["exported/bare"]
	if exp < float64(spin) || exp > 100e3 {
		t.Errorf("exported-ns/call = %v, want the median of the last 4096 pairs, at least %v and below 100µs", exp, float64(spin))
	}
	if q := exp / bare; ratio < q/10 || ratio > q*10 {
		t.Errorf("exported/bare = %v, want the median of the last ratios near the ratio of the medians, %v", ratio, q)
	}
}

// TestBenchBreakerClosedPairedFails: a failing call fails the benchmark.
func TestBenchBreakerClosedPairedFails(t *testing.T) {
	var n atomic.Int64
	var failed bool
	benchmark(t, "5x", func(b *testing.B) {
		defer func() { failed = b.Failed() }() // b.Fatal ends the function
		exporttest.BenchBreakerClosedPaired(b, counting(&n, errors.New("down")))
	})
	if !failed || n.Load() != 1 {
		t.Errorf("failed %v after %d calls, want true after 1", failed, n.Load())
	}
}
