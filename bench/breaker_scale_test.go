package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/sony/gobreaker/v2"

	"github.com/f0b5b96b/resilience/policy/breaker"
)

// retained returns the heap bytes that n values made by f hold, per value,
// once garbage (a constructor's temporaries) is collected.
func retained[T any](n int, f func() T) float64 {
	var before, after runtime.MemStats
	keep := make([]T, n)
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range keep {
		keep[i] = f()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// BenchmarkBreakerMemory is the memory a breaker holds at rest (made, with
// the default configuration, and not used), at several GOMAXPROCS: the
// B/breaker metric, measured with runtime.MemStats over 1000 breakers.
// The loop makes breakers, so B/op is what the constructor allocates,
// temporaries included.
func BenchmarkBreakerMemory(b *testing.B) {
	makers := []struct {
		name string
		make func() any
	}{
		{"resilience", func() any { return breaker.New() }},
		{"gobreaker", func() any { return gobreaker.NewCircuitBreaker[int](gobreaker.Settings{Name: "bench"}) }},
		{"failsafe", func() any { return circuitbreaker.NewWithDefaults[int]() }},
	}
	for _, procs := range []int{1, 2, 8, 32} {
		for _, m := range makers {
			b.Run(fmt.Sprintf("procs=%d/%s", procs, m.name), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				b.ReportAllocs()
				per := retained(1000, m.make)
				for b.Loop() {
					_ = m.make()
				}
				b.ReportMetric(per, "B/breaker")
			})
		}
	}
}

// BenchmarkBreakerKeyed is a breaker per key: the memory 10 000 keys hold
// (B/key, the key strings excluded), and a call through the breaker of a
// tracked key, next to a map of gobreakers (gobreaker has no keyed form;
// the map is what a user would write, without a bound or eviction).
func BenchmarkBreakerKeyed(b *testing.B) {
	const n = 10000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("host-%05d.example", i)
	}
	b.Run("memory/resilience", func(b *testing.B) {
		b.ReportAllocs()
		var k *breaker.Keyed[string]
		per := retained(1, func() *breaker.Keyed[string] {
			k = breaker.NewKeyed[string](breaker.WithMaxKeys(n))
			for _, key := range keys {
				k.Breaker(key)
			}
			return k
		})
		for i := 0; b.Loop(); i++ {
			k.Breaker(keys[i%n])
		}
		b.ReportMetric(per/n, "B/key")
	})
	b.Run("memory/gobreaker-map", func(b *testing.B) {
		b.ReportAllocs()
		var m map[string]*gobreaker.CircuitBreaker[int]
		per := retained(1, func() map[string]*gobreaker.CircuitBreaker[int] {
			m = make(map[string]*gobreaker.CircuitBreaker[int])
			for _, key := range keys {
				m[key] = gobreaker.NewCircuitBreaker[int](gobreaker.Settings{Name: key})
			}
			return m
		})
		for i := 0; b.Loop(); i++ {
			_ = m[keys[i%n]]
		}
		b.ReportMetric(per/n, "B/key")
	})

	ctx := context.Background()
	type hostKey struct{}
	k := breaker.NewKeyed[string](breaker.WithMaxKeys(n))
	p := breaker.KeyedPolicy[int](k, func(ctx context.Context) string { return ctx.Value(hostKey{}).(string) })
	ctxs := make([]context.Context, 64)
	for i := range ctxs {
		ctxs[i] = context.WithValue(ctx, hostKey{}, keys[i])
	}
	op := func(context.Context) (int, error) { return 1, nil }
	b.Run("Do/resilience", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := p.Do(ctxs[i%len(ctxs)], op); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// kind is one kind of call in a paired benchmark.
type kind struct {
	name string
	call func() error
}

// paired makes the calls of kinds in turns, in batches of batch calls,
// from the benchmark's goroutine or (parallel) from GOMAXPROCS goroutines
// that start each batch together, and reports each kind's median ns per
// call over the batches (for parallel batches: the batch's time over all
// the calls of its goroutines, as RunParallel's ns/op) and the ratio of
// the first kind's median to each other's. On a loaded machine, where
// sequential sub-benchmarks of one row swing by ±50%, kinds measured in
// turns see the same load, and their ratio holds steady. The goroutines
// live for the whole benchmark, so that starting a batch costs a channel
// send, not a goroutine.
func paired(b *testing.B, parallel bool, batch int, kinds []kind) {
	runBatch := func(k kind) error {
		for range batch {
			if err := k.call(); err != nil {
				return fmt.Errorf("%s: %w", k.name, err)
			}
		}
		return nil
	}
	run := func(k kind) float64 {
		start := time.Now()
		if err := runBatch(k); err != nil {
			b.Fatal(err)
		}
		return float64(time.Since(start)) / float64(batch)
	}
	if parallel {
		procs := runtime.GOMAXPROCS(0)
		starts := make([]chan kind, procs)
		done := make(chan error, procs)
		for i := range starts {
			starts[i] = make(chan kind)
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
		run = func(k kind) float64 {
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
			return float64(took) / float64(batch*procs)
		}
	}
	for _, k := range kinds {
		run(k) // warm up: a breaker under contention grows its shards here
	}
	times := make([][]float64, len(kinds))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for j := range kinds {
			i := (n + j) % len(kinds)
			times[i] = append(times[i], run(kinds[i]))
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

// BenchmarkBreakerPaired is the closed path (Do through the breaker, the
// op succeeds) and an open breaker's refusal, ours and gobreaker's made in
// turns (see paired), serially and in parallel: the ratios of the issue's
// table. The breakers are those of BenchmarkBreaker and
// BenchmarkBreakerOpen.
func BenchmarkBreakerPaired(b *testing.B) {
	ctx := context.Background()
	errDown := errors.New("down")
	for _, parallel := range []bool{false, true} {
		mode := "serial"
		if parallel {
			mode = "parallel"
		}
		b.Run("closed/"+mode, func(b *testing.B) {
			ours := breaker.Policy[int](breaker.New())
			oursOp := func(context.Context) (int, error) { return 1, nil }
			gb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{Name: "bench"})
			gbOp := func() (int, error) { return 1, nil }
			paired(b, parallel, 20000, []kind{
				{"resilience", func() error { _, err := ours.Do(ctx, oursOp); return err }},
				{"gobreaker", func() error { _, err := gb.Execute(gbOp); return err }},
			})
		})
		b.Run("open/"+mode, func(b *testing.B) {
			ours := breaker.Policy[int](breaker.New(breaker.WithCooldown(time.Hour)))
			for range 5 {
				_, _ = ours.Do(ctx, func(context.Context) (int, error) { return 0, errDown })
			}
			oursOp := func(context.Context) (int, error) { return 1, nil }
			gb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{Name: "bench", Timeout: time.Hour})
			for range 6 {
				_, _ = gb.Execute(func() (int, error) { return 0, errDown })
			}
			gbOp := func() (int, error) { return 1, nil }
			paired(b, parallel, 20000, []kind{
				{"resilience", func() error {
					if _, err := ours.Do(ctx, oursOp); !errors.Is(err, breaker.ErrOpen) {
						return fmt.Errorf("got %v, want ErrOpen", err)
					}
					return nil
				}},
				{"gobreaker", func() error {
					if _, err := gb.Execute(gbOp); !errors.Is(err, gobreaker.ErrOpenState) {
						return fmt.Errorf("got %v, want ErrOpenState", err)
					}
					return nil
				}},
			})
		})
	}
}
