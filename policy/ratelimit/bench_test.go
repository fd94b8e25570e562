package ratelimit_test

import (
	"context"
	"testing"

	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

// The bucket always has tokens (1e9 per second, burst 1<<40: far more than
// a benchmark can take), so every call is admitted and does its full work:
// read the clock, update the bucket. A refusal fails the run.
const (
	benchRate  = 1e9
	benchBurst = 1 << 40
)

// BenchmarkLimiter is the cost of the limiter's entry points on a bucket
// that always has tokens: Allow from one goroutine and from GOMAXPROCS
// goroutines (contention on the bucket's word), AllowN, and a Wait that
// does not wait.
func BenchmarkLimiter(b *testing.B) {
	b.Run("Allow/serial", func(b *testing.B) {
		l := ratelimit.New(benchRate, benchBurst)
		b.ReportAllocs()
		for b.Loop() {
			if !l.Allow() {
				b.Fatal("refused")
			}
		}
	})
	b.Run("Allow/parallel", func(b *testing.B) {
		l := ratelimit.New(benchRate, benchBurst)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if !l.Allow() {
					panic("refused")
				}
			}
		})
	})
	b.Run("AllowN", func(b *testing.B) {
		l := ratelimit.New(benchRate, benchBurst)
		b.ReportAllocs()
		for b.Loop() {
			if !l.AllowN(3) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("Wait", func(b *testing.B) {
		l := ratelimit.New(benchRate, benchBurst)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if err := l.Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTuning is the cost of the run-time entry points: Tokens (a
// read), Reserve then Cancel (a reservation allocates), and SetRate (which
// replaces the bucket and allocates), on a limiter with no other caller.
func BenchmarkTuning(b *testing.B) {
	b.Run("Tokens", func(b *testing.B) {
		l := ratelimit.New(benchRate, benchBurst)
		b.ReportAllocs()
		for b.Loop() {
			if l.Tokens() <= 0 {
				b.Fatal("empty")
			}
		}
	})
	b.Run("Reserve+Cancel", func(b *testing.B) {
		l := ratelimit.New(benchRate, benchBurst)
		b.ReportAllocs()
		for b.Loop() {
			r := l.Reserve()
			if !r.OK() {
				b.Fatal("not OK")
			}
			r.Cancel()
		}
	})
	b.Run("SetRate", func(b *testing.B) {
		l := ratelimit.New(benchRate, benchBurst)
		rates := [2]float64{1e8, 3e8}
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			l.SetRate(rates[i&1])
			i++
		}
	})
}

// BenchmarkKeyedSetRate retunes a Keyed tracking 8192 keys (the default
// MaxKeys): it reports the time per key.
func BenchmarkKeyedSetRate(b *testing.B) {
	const keys = 8192
	k := ratelimit.NewKeyed[int](benchRate, benchBurst)
	for key := range keys {
		k.Allow(key)
	}
	rates := [2]float64{1e8, 3e8}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		k.SetRate(rates[i&1])
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/keys, "ns/key")
}
