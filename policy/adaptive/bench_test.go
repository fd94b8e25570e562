package adaptive_test

import (
	"context"
	"testing"

	"github.com/f0b5b96b/resilience/policy/adaptive"
)

func BenchmarkAcquireDone(b *testing.B) {
	lim := adaptive.New()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p, err := lim.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		p.Done(nil)
	}
}

func BenchmarkAcquireDoneParallel(b *testing.B) {
	lim := adaptive.New(adaptive.WithInitial(1000), adaptive.WithMinLimit(1000), adaptive.WithMaxLimit(1000))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			p, err := lim.Acquire(ctx)
			if err != nil {
				panic(err)
			}
			p.Done(nil)
		}
	})
}

func BenchmarkPolicyDo(b *testing.B) {
	p := adaptive.Policy[int](adaptive.New())
	op := func(context.Context) (int, error) { return 1, nil }
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Do(ctx, op); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRefused(b *testing.B) {
	lim := adaptive.New(adaptive.WithMinLimit(1), adaptive.WithMaxLimit(1))
	ctx := context.Background()
	if _, err := lim.Acquire(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := lim.Acquire(ctx); err == nil {
			b.Fatal("admitted over the limit")
		}
	}
}
