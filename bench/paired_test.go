package bench

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"
)

// kind is one kind of call in a paired benchmark.
type kind struct {
	name string
	call func() error
}

// pairedSpan is how long each batch of a paired benchmark takes.
const pairedSpan = 5 * time.Millisecond

// paired makes the calls of kinds in turns, in batches that each take
// about span, from the benchmark's goroutine or (parallel) from GOMAXPROCS
// goroutines that start each batch together, and reports each kind's
// median ns per call over the batches (for parallel batches: the batch's
// time over all the calls of its goroutines, as RunParallel's ns/op) and
// the ratio of the first kind's median to each other's. On a loaded
// machine, where sequential sub-benchmarks of one row swing by ±50%, kinds
// measured in turns see the same load, and their ratio holds steady.
//
// A kind's batch is as many calls as take span one after the other
// (measured before the first batch), so that every kind's batches last
// about as long: a fixed count would make a fast kind's batches short,
// and a parallel batch's time includes the tens of microseconds the
// goroutines take to wake up, a larger share of a short batch than of a
// long one. The goroutines live for the whole benchmark, so that starting
// a batch costs a channel send, not a goroutine.
func paired(b *testing.B, parallel bool, span time.Duration, kinds []kind) {
	// batch is a kind and the calls in each of its batches.
	type batch struct {
		kind
		n int
	}
	runBatch := func(k batch) error {
		for range k.n {
			if err := k.call(); err != nil {
				return fmt.Errorf("%s: %w", k.name, err)
			}
		}
		return nil
	}
	batches := make([]batch, len(kinds))
	for i, k := range kinds {
		const probe = 2000
		start := time.Now()
		if err := runBatch(batch{k, probe}); err != nil {
			b.Fatal(err)
		}
		batches[i] = batch{k, max(probe, int(span*probe/max(time.Since(start), 1)))}
	}
	run := func(k batch) float64 {
		start := time.Now()
		if err := runBatch(k); err != nil {
			b.Fatal(err)
		}
		return float64(time.Since(start)) / float64(k.n)
	}
	if parallel {
		procs := runtime.GOMAXPROCS(0)
		starts := make([]chan batch, procs)
		done := make(chan error, procs)
		for i := range starts {
			starts[i] = make(chan batch)
			go func() {
				for k := range starts[i] {
					done <- runBatch(k)
				}
			}()
		}
		defer func() {
			for _, c := range starts {
				close(c)
			}
		}()
		run = func(k batch) float64 {
			start := time.Now()
			for _, c := range starts {
				c <- k
			}
			var failed error
			for range starts {
				if err := <-done; err != nil {
					failed = err
				}
			}
			took := time.Since(start)
			if failed != nil {
				b.Fatal(failed)
			}
			return float64(took) / float64(k.n*procs)
		}
	}
	for _, k := range batches {
		run(k) // warm up: a breaker under contention grows its shards here
	}
	times := make([][]float64, len(kinds))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for j := range kinds {
			i := (n + j) % len(kinds)
			times[i] = append(times[i], run(batches[i]))
		}
		n++
	}
	medians := make([]float64, len(kinds))
	for i, ts := range times {
		slices.Sort(ts)
		medians[i] = ts[len(ts)/2]
		b.ReportMetric(medians[i], kinds[i].name+"-ns/call")
	}
	for i := 1; i < len(kinds); i++ {
		b.ReportMetric(medians[0]/medians[i], kinds[0].name+"/"+kinds[i].name)
	}
}
