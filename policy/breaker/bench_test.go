package breaker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

func BenchmarkClosedAllow(b *testing.B) {
	br := breaker.New()
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := br.Allow()
			if err != nil {
				b.Fatal(err)
			}
			p.Done(nil)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p, err := br.Allow()
				if err != nil {
					b.Fatal(err)
				}
				p.Done(nil)
			}
		})
	})
}

func BenchmarkClosedPolicy(b *testing.B) {
	benchSuccesses(b, breaker.Policy[int](breaker.New()))
}

// benchSuccesses runs calls that succeed through p, one goroutine
// ("serial") and then many ("parallel").
func benchSuccesses(b *testing.B, p resilience.Policy[int]) {
	op := func(context.Context) (int, error) { return 1, nil }
	ctx := context.Background()
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Do(ctx, op); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := p.Do(ctx, op); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkClosedWindows is the closed path with the rules that read the
// clock on every call: a time-based window, and slow-call detection.
func BenchmarkClosedWindows(b *testing.B) {
	for _, c := range []struct {
		name string
		opts []breaker.Option
	}{
		{"count", []breaker.Option{breaker.WithFailureRatio(0.5), breaker.WithWindowCalls(100)}},
		{"time", []breaker.Option{breaker.WithFailureRatio(0.5), breaker.WithWindowDuration(time.Minute)}},
		{"slow", []breaker.Option{breaker.WithSlowCallRatio(0.5), breaker.WithSlowCall(time.Second)}},
	} {
		br := breaker.New(c.opts...)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					p, _ := br.Allow()
					p.Done(nil)
				}
			})
		})
	}
}

// BenchmarkOpenAllow is a refusal by an open breaker: one allocation, the
// error.
func BenchmarkOpenAllow(b *testing.B) {
	br := breaker.New(breaker.WithClock(clock.NewFake()))
	br.ForceOpen()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := br.Allow(); !errors.Is(err, breaker.ErrOpen) {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkClosedPolicyObserved is BenchmarkClosedPolicy with a counting
// observer: a success emits no event, so it costs the same.
func BenchmarkClosedPolicyObserved(b *testing.B) {
	benchSuccesses(b, breaker.Policy[int](breaker.New(breaker.WithObserver(new(telemetry.Counter)))))
}

// BenchmarkOpenAllowSerial is a refusal by an open breaker, serial,
// without and with a counting observer (one Observe call per refusal).
func BenchmarkOpenAllowSerial(b *testing.B) {
	for _, c := range []struct {
		name string
		opts []breaker.Option
	}{
		{"none", nil},
		{"counter", []breaker.Option{breaker.WithObserver(new(telemetry.Counter))}},
	} {
		br := breaker.New(append(c.opts, breaker.WithThreshold(1), breaker.WithClock(clock.NewFake()))...)
		br.Record(true)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := br.Allow(); !errors.Is(err, breaker.ErrOpen) {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStats is one Stats call, what polling a breaker every second
// costs.
func BenchmarkStats(b *testing.B) {
	br := breaker.New()
	b.ReportAllocs()
	for b.Loop() {
		_ = br.Stats()
	}
}
