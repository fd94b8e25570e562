package bench

import (
	"sync/atomic"
	"testing"

	"golang.org/x/time/rate"

	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

// The bucket always has tokens (1e9 per second, burst 1e9: far more than a
// benchmark can take), so every call is admitted and both sides do their
// full work: read the clock, update the bucket. A refusal fails the run.
const (
	rlRate  = 1e9
	rlBurst = 1e9
)

func BenchmarkAllow(b *testing.B) {
	ours := func() func() bool {
		l := ratelimit.New(rlRate, rlBurst)
		return l.Allow
	}
	xrate := func() func() bool {
		l := rate.NewLimiter(rate.Limit(rlRate), rlBurst)
		return l.Allow
	}
	for _, c := range []struct {
		name  string
		allow func() func() bool
	}{{"resilience", ours}, {"x-time-rate", xrate}} {
		b.Run(c.name+"/serial", func(b *testing.B) {
			allow := c.allow()
			b.ReportAllocs()
			for b.Loop() {
				if !allow() {
					b.Fatal("refused")
				}
			}
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			allow := c.allow()
			var refused atomic.Bool
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if !allow() {
						refused.Store(true)
					}
				}
			})
			if refused.Load() {
				b.Fatal("refused")
			}
		})
	}
}

// BenchmarkAllowKeyed takes a token from one of 1024 tracked keys.
func BenchmarkAllowKeyed(b *testing.B) {
	k := ratelimit.NewKeyed[int](rlRate, rlBurst)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if !k.Allow(i & 1023) {
			b.Fatal("refused")
		}
		i++
	}
}

// BenchmarkRateLimitPolicy runs an op through the refusing policy.
func BenchmarkRateLimitPolicy(b *testing.B) {
	benchPolicy(b, ratelimit.Policy[int](ratelimit.New(rlRate, rlBurst)))
}
