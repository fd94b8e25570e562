package bench

import (
	"context"
	"errors"
	"testing"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/sony/gobreaker/v2"

	"github.com/f0b5b96b/resilience/policy/breaker"
)

// BenchmarkBreaker is the closed path, the one every call of a healthy
// dependency takes: admit the call, run an op that succeeds, count the
// success. Each library runs with its default configuration (ours and
// gobreaker's trip on consecutive failures; failsafe-go's on one failure)
// through its closure API.
func BenchmarkBreaker(b *testing.B) {
	ctx := context.Background()
	errBench := errors.New("bench")

	ours := breaker.Policy[int](breaker.New())
	oursOp := func(context.Context) (int, error) { return 1, nil }
	bench(b, "resilience", func() error {
		_, err := ours.Do(ctx, oursOp)
		return err
	})

	gb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{Name: "bench"})
	gbOp := func() (int, error) { return 1, nil }
	bench(b, "gobreaker", func() error {
		_, err := gb.Execute(gbOp)
		return err
	})

	fs := failsafe.With[int](circuitbreaker.NewWithDefaults[int]())
	fsOp := func() (int, error) { return 1, nil }
	bench(b, "failsafe", func() error {
		_, err := fs.Get(fsOp)
		return err
	})
	_ = errBench
}

// bench runs call serially and from b.RunParallel's goroutines.
func bench(b *testing.B, name string, call func() error) {
	b.Run(name+"/serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := call(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(name+"/parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := call(); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
