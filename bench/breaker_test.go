package bench

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/sony/gobreaker/v2"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

// BenchmarkBreaker is the closed path, the one every call of a healthy
// dependency takes: admit the call, run an op that succeeds, count the
// success. Each library runs with its default configuration (ours and
// gobreaker's trip on consecutive failures; failsafe-go's on one failure)
// through its closure API.
func BenchmarkBreaker(b *testing.B) {
	ctx := context.Background()

	ours := breaker.Policy[int](breaker.New())
	oursOp := func(context.Context) (int, error) { return 1, nil }
	bench(b, "resilience", func() error {
		_, err := ours.Do(ctx, oursOp)
		return err
	})

	// With a counting observer: a success emits no event, so it costs the
	// same.
	observed := breaker.Policy[int](breaker.New(breaker.WithObserver(new(telemetry.Counter))))
	bench(b, "resilience+counter", func() error {
		_, err := observed.Do(ctx, oursOp)
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
}

// BenchmarkBreakerTwoStep is the closed path through each library's
// two-step API, for callers that cannot wrap the call in a function: ask
// for admission, make the call, report its outcome.
func BenchmarkBreakerTwoStep(b *testing.B) {
	br := breaker.New()
	bench(b, "resilience", func() error {
		p, err := br.Allow()
		if err != nil {
			return err
		}
		p.Done(nil)
		return nil
	})

	gb := gobreaker.NewTwoStepCircuitBreaker[int](gobreaker.Settings{Name: "bench"})
	bench(b, "gobreaker", func() error {
		done, err := gb.Allow()
		if err != nil {
			return err
		}
		done(nil)
		return nil
	})

	cb := circuitbreaker.NewWithDefaults[int]()
	bench(b, "failsafe", func() error {
		if !cb.TryAcquirePermit() {
			return circuitbreaker.ErrOpen
		}
		cb.RecordError(nil)
		return nil
	})
}

// BenchmarkBreakerOpen is a call that an open breaker refuses: what every
// call costs while a dependency is down. Each breaker was tripped by
// failures and has an hour of cooldown left, so each reads the clock to
// check it. Ours returns an error carrying the breaker's name and the time
// left (shared by the refusals of the same millisecond); gobreaker returns
// a bare sentinel.
func BenchmarkBreakerOpen(b *testing.B) {
	ctx := context.Background()
	errDown := errors.New("down")

	br := breaker.New(breaker.WithCooldown(time.Hour))
	ours := breaker.Policy[int](br)
	for range 5 {
		_, _ = ours.Do(ctx, func(context.Context) (int, error) { return 0, errDown })
	}
	oursOp := func(context.Context) (int, error) { return 1, nil }
	refused(b, "resilience", breaker.ErrOpen, func() error {
		_, err := ours.Do(ctx, oursOp)
		return err
	})

	// With a counting observer: one Observe call per refusal, no
	// allocation.
	brObs := breaker.New(breaker.WithCooldown(time.Hour), breaker.WithObserver(new(telemetry.Counter)))
	observed := breaker.Policy[int](brObs)
	for range 5 {
		_, _ = observed.Do(ctx, func(context.Context) (int, error) { return 0, errDown })
	}
	refused(b, "resilience+counter", breaker.ErrOpen, func() error {
		_, err := observed.Do(ctx, oursOp)
		return err
	})

	gb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{Name: "bench", Timeout: time.Hour})
	for range 6 {
		_, _ = gb.Execute(func() (int, error) { return 0, errDown })
	}
	gbOp := func() (int, error) { return 1, nil }
	refused(b, "gobreaker", gobreaker.ErrOpenState, func() error {
		_, err := gb.Execute(gbOp)
		return err
	})

	fs := failsafe.With[int](circuitbreaker.NewBuilder[int]().WithDelay(time.Hour).Build())
	_, _ = fs.Get(func() (int, error) { return 0, errDown })
	fsOp := func() (int, error) { return 1, nil }
	refused(b, "failsafe", circuitbreaker.ErrOpen, func() error {
		_, err := fs.Get(fsOp)
		return err
	})
}

// refused is bench for a call that must be refused with want.
func refused(b *testing.B, name string, want error, call func() error) {
	bench(b, name, func() error {
		if err := call(); !errors.Is(err, want) {
			return fmt.Errorf("got %v, want %v", err, want)
		}
		return nil
	})
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
