package throttle_test

import (
	"context"
	"testing"

	"github.com/f0b5b96b/resilience/policy/throttle"
)

func BenchmarkAllowDone(b *testing.B) {
	th := throttle.New()
	b.ReportAllocs()
	for b.Loop() {
		p, err := th.Allow()
		if err != nil {
			b.Fatal(err)
		}
		p.Done(nil)
	}
}

func BenchmarkAllowDoneParallel(b *testing.B) {
	th := throttle.New()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			p, err := th.Allow()
			if err != nil {
				panic(err)
			}
			p.Done(nil)
		}
	})
}

func BenchmarkPolicyDo(b *testing.B) {
	p := throttle.Policy[int](throttle.New())
	op := func(context.Context) (int, error) { return 1, nil }
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Do(ctx, op); err != nil {
			b.Fatal(err)
		}
	}
}
