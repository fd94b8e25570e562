package bench

import (
	"context"
	"testing"

	"golang.org/x/sync/semaphore"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
)

// guard is the part of a bulkhead both sides have: take a slot, give it
// back.
type guard struct {
	acquire func(context.Context) error
	release func()
}

func ours(max, queue int) guard {
	b := bulkhead.New(max, bulkhead.WithMaxQueue(queue))
	return guard{b.Acquire, b.Release}
}

func xsync(max, _ int) guard {
	s := semaphore.NewWeighted(int64(max))
	return guard{
		func(ctx context.Context) error { return s.Acquire(ctx, 1) },
		func() { s.Release(1) },
	}
}

// BenchmarkBulkhead takes and gives back a slot:
//   - serial: one goroutine, a free slot every time;
//   - parallel: GOMAXPROCS goroutines, more slots than goroutines, so
//     nobody waits: contention on the counter only;
//   - queued: 8·GOMAXPROCS goroutines for 2 slots, so most callers wait in
//     the FIFO queue and are handed a slot.
func BenchmarkBulkhead(b *testing.B) {
	for _, c := range []struct {
		name string
		make func(max, queue int) guard
	}{{"resilience", ours}, {"x-sync-semaphore", xsync}} {
		b.Run(c.name+"/serial", func(b *testing.B) {
			g := c.make(1, 0)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := g.acquire(ctx); err != nil {
					b.Fatal(err)
				}
				g.release()
			}
		})
		b.Run(c.name+"/parallel", func(b *testing.B) { cycleParallel(b, c.make(1024, 0)) })
		b.Run(c.name+"/queued", func(b *testing.B) {
			b.SetParallelism(8)
			cycleParallel(b, c.make(2, 1024))
		})
	}
}

// cycleParallel takes and gives back slots of g from parallel goroutines.
func cycleParallel(b *testing.B, g guard) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if err := g.acquire(ctx); err != nil {
				panic(err)
			}
			g.release()
		}
	})
}

// BenchmarkTryAcquire takes and gives back a free slot without waiting.
func BenchmarkTryAcquire(b *testing.B) {
	bh := bulkhead.New(1)
	s := semaphore.NewWeighted(1)
	b.Run("resilience", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !bh.TryAcquire() {
				b.Fatal("refused")
			}
			bh.Release()
		}
	})
	b.Run("x-sync-semaphore", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !s.TryAcquire(1) {
				b.Fatal("refused")
			}
			s.Release(1)
		}
	})
}

// BenchmarkBulkheadPolicy runs an op through the bulkhead's policy.
func BenchmarkBulkheadPolicy(b *testing.B) {
	benchPolicy(b, bulkhead.Policy[int](bulkhead.New(16)))
}

// benchPolicy runs an op that succeeds through p.
func benchPolicy(b *testing.B, p resilience.Policy[int]) {
	op := func(context.Context) (int, error) { return 1, nil }
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Do(ctx, op); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBulkheadPaired is BenchmarkBulkhead's serial and parallel rows
// (a free slot every time: take it and give it back), ours and
// x/sync/semaphore's made in turns (see paired): the ratios of the
// bulkhead's targets.
func BenchmarkBulkheadPaired(b *testing.B) {
	ctx := context.Background()
	for _, parallel := range []bool{false, true} {
		mode, slots := "serial", 1
		if parallel {
			mode, slots = "parallel", 1024 // more than goroutines: nobody waits
		}
		b.Run(mode, func(b *testing.B) {
			bh := bulkhead.New(slots)
			sem := semaphore.NewWeighted(int64(slots))
			paired(b, parallel, pairedSpan, []kind{
				{"resilience", func() error {
					if err := bh.Acquire(ctx); err != nil {
						return err
					}
					bh.Release()
					return nil
				}},
				{"semaphore", func() error {
					if err := sem.Acquire(ctx, 1); err != nil {
						return err
					}
					sem.Release(1)
					return nil
				}},
			})
		})
	}
}
