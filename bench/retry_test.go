package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"

	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

var errRetryBench = errors.New("transient")

// failTimes returns an op that fails n times, then succeeds, each time it
// is reset; reset is called at the start of every benchmark iteration.
type failTimes struct{ n, calls int }

func (f *failTimes) get() (int, error) {
	if f.calls++; f.calls <= f.n {
		return 0, errRetryBench
	}
	return f.calls, nil
}

// BenchmarkRetry compares a retry of 3 attempts: a call that succeeds at
// once (the common case), and a call that fails twice and then succeeds,
// with no delay between attempts so that only the library's own cost is
// measured.
func BenchmarkRetry(b *testing.B) {
	ctx := context.Background()
	ok := func() (int, error) { return 1, nil }
	okCtx := func(context.Context) (int, error) { return 1, nil }

	b.Run("success/resilience", func(b *testing.B) {
		p := retry.New[int]()
		b.ReportAllocs()
		for b.Loop() {
			_, _ = p.Do(ctx, okCtx)
		}
	})
	b.Run("success/resilience+counter", func(b *testing.B) {
		p := retry.New[int](retry.WithObserver(new(telemetry.Counter)))
		b.ReportAllocs()
		for b.Loop() {
			_, _ = p.Do(ctx, okCtx)
		}
	})
	b.Run("success/failsafe-go", func(b *testing.B) {
		ex := failsafe.With[int](retrypolicy.NewBuilder[int]().WithMaxAttempts(3).
			WithBackoff(100*time.Millisecond, 10*time.Second).WithJitterFactor(1).Build())
		b.ReportAllocs()
		for b.Loop() {
			_, _ = ex.Get(ok)
		}
	})
	b.Run("success-parallel/resilience", func(b *testing.B) {
		p := retry.New[int]()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_, _ = p.Do(ctx, okCtx)
			}
		})
	})
	b.Run("success-parallel/failsafe-go", func(b *testing.B) {
		ex := failsafe.With[int](retrypolicy.NewBuilder[int]().WithMaxAttempts(3).
			WithBackoff(100*time.Millisecond, 10*time.Second).WithJitterFactor(1).Build())
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_, _ = ex.Get(ok)
			}
		})
	})
	b.Run("two-failures/resilience", func(b *testing.B) {
		p := retry.New[int](retry.WithBackoff(backoff.Constant(0)))
		f := &failTimes{n: 2}
		op := func(context.Context) (int, error) { return f.get() }
		b.ReportAllocs()
		for b.Loop() {
			f.calls = 0
			if _, err := p.Do(ctx, op); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("two-failures/failsafe-go", func(b *testing.B) {
		ex := failsafe.With[int](retrypolicy.NewBuilder[int]().WithMaxAttempts(3).WithDelay(0).Build())
		f := &failTimes{n: 2}
		b.ReportAllocs()
		for b.Loop() {
			f.calls = 0
			if _, err := ex.Get(f.get); err != nil {
				b.Fatal(err)
			}
		}
	})
}
