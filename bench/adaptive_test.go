package bench

import (
	"context"
	"testing"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
	"github.com/failsafe-go/failsafe-go/adaptivethrottler"

	"github.com/f0b5b96b/resilience/policy/adaptive"
	"github.com/f0b5b96b/resilience/policy/throttle"
)

// BenchmarkAdaptiveLimiter admits a call through an adaptive concurrency
// limiter, runs an op that succeeds and records its latency: ours
// (policy/adaptive, Gradient2 by default) and failsafe-go's
// adaptivelimiter, each in its default configuration, through its
// closure API.
func BenchmarkAdaptiveLimiter(b *testing.B) {
	ctx := context.Background()
	ours := adaptive.Policy[int](adaptive.New())
	oursOp := func(context.Context) (int, error) { return 1, nil }
	bench(b, "resilience", func() error {
		_, err := ours.Do(ctx, oursOp)
		return err
	})

	fs := failsafe.With[int](adaptivelimiter.NewWithDefaults[int]())
	fsOp := func() (int, error) { return 1, nil }
	bench(b, "failsafe", func() error {
		_, err := fs.Get(fsOp)
		return err
	})
}

// BenchmarkAdaptiveLimiterTwoStep is the same through each library's
// permit API, for servers and interceptors: take a permit, make the call,
// end the permit (ours: Acquire and Permit.Done; failsafe-go's:
// AcquirePermit and Permit.Record).
func BenchmarkAdaptiveLimiterTwoStep(b *testing.B) {
	ctx := context.Background()
	lim := adaptive.New()
	bench(b, "resilience", func() error {
		p, err := lim.Acquire(ctx)
		if err != nil {
			return err
		}
		p.Done(nil)
		return nil
	})

	fl := adaptivelimiter.NewWithDefaults[int]()
	bench(b, "failsafe", func() error {
		p, err := fl.AcquirePermit(ctx)
		if err != nil {
			return err
		}
		p.Record()
		return nil
	})
}

// BenchmarkAdaptiveThrottler lets a call through a client-side adaptive
// throttler and counts its success: ours (policy/throttle) and
// failsafe-go's adaptivethrottler, each in its default configuration,
// through its closure API.
func BenchmarkAdaptiveThrottler(b *testing.B) {
	ctx := context.Background()
	ours := throttle.Policy[int](throttle.New())
	oursOp := func(context.Context) (int, error) { return 1, nil }
	bench(b, "resilience", func() error {
		_, err := ours.Do(ctx, oursOp)
		return err
	})

	fs := failsafe.With[int](adaptivethrottler.NewWithDefaults[int]())
	fsOp := func() (int, error) { return 1, nil }
	bench(b, "failsafe", func() error {
		_, err := fs.Get(fsOp)
		return err
	})
}

// BenchmarkAdaptiveThrottlerTwoStep is the same through each library's
// two-step API (ours: Allow and Permit.Done; failsafe-go's:
// AcquirePermit and RecordSuccess).
func BenchmarkAdaptiveThrottlerTwoStep(b *testing.B) {
	th := throttle.New()
	bench(b, "resilience", func() error {
		p, err := th.Allow()
		if err != nil {
			return err
		}
		p.Done(nil)
		return nil
	})

	ft := adaptivethrottler.NewWithDefaults[int]()
	bench(b, "failsafe", func() error {
		if err := ft.AcquirePermit(); err != nil {
			return err
		}
		ft.RecordSuccess()
		return nil
	})
}
