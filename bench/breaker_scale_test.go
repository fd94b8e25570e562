package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
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

// BenchmarkBreakerPaired is the closed path (Do through the breaker, the
// op succeeds) and an open breaker's refusal, ours and gobreaker's made in
// turns (see paired), serially and in parallel: the ratios of the
// targets table in README.md. The breakers are those of BenchmarkBreaker and
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
			paired(b, parallel, pairedSpan, []kind{
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
			paired(b, parallel, pairedSpan, []kind{
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
