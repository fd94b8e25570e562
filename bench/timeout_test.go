package bench

import (
	"context"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	fstimeout "github.com/failsafe-go/failsafe-go/timeout"

	"github.com/f0b5b96b/resilience/policy/timeout"
)

// BenchmarkTimeout compares a 1 s timeout around a call that returns at
// once and, as a call that honours its context does, asks for its
// context's Done channel. context.WithTimeout is the floor: the cost of the
// deadline itself.
func BenchmarkTimeout(b *testing.B) {
	ctx := context.Background()
	op := func(ctx context.Context) (int, error) { _ = ctx.Done(); return 1, nil }

	b.Run("context.WithTimeout", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, cancel := context.WithTimeout(ctx, time.Second)
			_, _ = op(c)
			cancel()
		}
	})
	b.Run("resilience", func(b *testing.B) {
		p := timeout.New[int](time.Second)
		b.ReportAllocs()
		for b.Loop() {
			_, _ = p.Do(ctx, op)
		}
	})
	b.Run("resilience-abandon", func(b *testing.B) {
		p := timeout.New[int](time.Second, timeout.WithAbandon(true))
		b.ReportAllocs()
		for b.Loop() {
			_, _ = p.Do(ctx, op)
		}
	})
	b.Run("failsafe-go", func(b *testing.B) {
		ex := failsafe.With[int](fstimeout.New[int](time.Second))
		fn := func(e failsafe.Execution[int]) (int, error) { return op(e.Context()) }
		b.ReportAllocs()
		for b.Loop() {
			_, _ = ex.GetWithExecution(fn)
		}
	})
	b.Run("parallel/resilience", func(b *testing.B) {
		p := timeout.New[int](time.Second)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_, _ = p.Do(ctx, op)
			}
		})
	})
	b.Run("parallel/failsafe-go", func(b *testing.B) {
		ex := failsafe.With[int](fstimeout.New[int](time.Second))
		fn := func(e failsafe.Execution[int]) (int, error) { return op(e.Context()) }
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_, _ = ex.GetWithExecution(fn)
			}
		})
	})
}
