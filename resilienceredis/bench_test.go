package resilienceredis

import (
	"context"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/go-redis/redis_rate/v10"
)

// BenchmarkLimiterDecision is one admitted decision, one round trip to the
// package's server, for this package's Limiter and for redis_rate/v10 on
// the same server, in the same run: compare their ns/op.
func BenchmarkLimiterDecision(b *testing.B) {
	ctx := context.Background()
	const rate = 1_000_000 // a limit the benchmark never reaches: every decision admits
	for _, ctxTimeouts := range []bool{true, false} {
		// With a client that honours the context's deadline the round
		// trip runs on the caller's goroutine; with another, on one of its
		// own (to bound it whatever the client does).
		name := "resilienceredis"
		if !ctxTimeouts {
			name += "/own-goroutine"
		}
		b.Run(name, func(b *testing.B) {
			l := NewLimiter(clientWith(b, redistest.Addr(b), ctxTimeouts), "bench", rate, rate, WithPrefix(testPrefix(b)), WithTimeout(time.Second))
			b.ReportAllocs()
			for b.Loop() {
				if !l.Allow(ctx) {
					b.Fatal("refused")
				}
			}
		})
	}
	b.Run("redis_rate", func(b *testing.B) {
		l := redis_rate.NewLimiter(clientWith(b, redistest.Addr(b), true))
		key := testPrefix(b) + "bench"
		limit := redis_rate.Limit{Rate: rate, Burst: rate, Period: time.Second}
		b.ReportAllocs()
		for b.Loop() {
			res, err := l.Allow(ctx, key, limit)
			if err != nil || res.Allowed != 1 {
				b.Fatal("refused", err)
			}
		}
	})
}

// BenchmarkLimiterWait is one Wait on a token there now (one round trip)
// under a context that can be cancelled, with either client setting.
func BenchmarkLimiterWait(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const rate = 1_000_000 // a limit the benchmark never reaches: no Wait waits
	for _, ctxTimeouts := range []bool{true, false} {
		name := "ContextTimeoutEnabled"
		if !ctxTimeouts {
			name = "own-goroutine"
		}
		b.Run(name, func(b *testing.B) {
			l := NewLimiter(clientWith(b, redistest.Addr(b), ctxTimeouts), "benchwait", rate, rate, WithPrefix(testPrefix(b)), WithTimeout(time.Second))
			b.ReportAllocs()
			for b.Loop() {
				if err := l.Wait(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLimiterDecisionPaired makes, in each iteration, one decision
// with this package's Limiter and one with redis_rate/v10 (each first
// every other time), on the same server, timing each: both see the same
// load of the machine, so their ratio holds even where ns/op drifts
// between runs. It reports each one's
// mean time per decision and ours/redis_rate.
func BenchmarkLimiterDecisionPaired(b *testing.B) {
	ctx := context.Background()
	const rate = 1_000_000
	addr := redistest.Addr(b)
	ours := NewLimiter(clientWith(b, addr, true), "paired", rate, rate, WithPrefix(testPrefix(b)), WithTimeout(time.Second))
	theirs := redis_rate.NewLimiter(clientWith(b, addr, true))
	key := testPrefix(b) + "paired"
	limit := redis_rate.Limit{Rate: rate, Burst: rate, Period: time.Second}
	var tOurs, tTheirs time.Duration
	n := 0
	b.ReportAllocs()
	oursOnce := func() time.Duration {
		t0 := time.Now()
		if !ours.Allow(ctx) {
			b.Fatal("refused")
		}
		return time.Since(t0)
	}
	theirsOnce := func() time.Duration {
		t0 := time.Now()
		if res, err := theirs.Allow(ctx, key, limit); err != nil || res.Allowed != 1 {
			b.Fatal("refused", err)
		}
		return time.Since(t0)
	}
	for b.Loop() {
		if n%2 == 0 { // each goes first every other time
			tOurs += oursOnce()
			tTheirs += theirsOnce()
		} else {
			tTheirs += theirsOnce()
			tOurs += oursOnce()
		}
		n++
	}
	b.ReportMetric(float64(tOurs.Nanoseconds())/float64(n), "ours-ns/decision")
	b.ReportMetric(float64(tTheirs.Nanoseconds())/float64(n), "redis_rate-ns/decision")
	b.ReportMetric(float64(tOurs)/float64(tTheirs), "ours/redis_rate")
}

// BenchmarkBreakerClosed is a call admitted and counted by a closed
// fleet-wide breaker: no Redis round trip (the outcome joins the batch).
func BenchmarkBreakerClosed(b *testing.B) {
	br := NewBreaker(newClient(b), "bench", WithPrefix(testPrefix(b)), WithMaxBatch(1<<30))
	defer br.Close()
	b.ReportAllocs()
	for b.Loop() {
		p, err := br.Allow()
		if err != nil {
			b.Fatal(err)
		}
		p.Done(nil)
	}
}

// BenchmarkCacheStoreGet measures a hit of a CacheStore: one script round
// trip and the decoding of a small JSON value.
func BenchmarkCacheStoreGet(b *testing.B) {
	ctx := context.Background()
	s := NewCacheStore[user](newClient(b), "bench", nil, WithCachePrefix(testPrefix(b)), WithCacheTimeout(time.Second))
	s.Set(ctx, "k", entryAt(user{"Ada", 36}, time.Hour, time.Hour))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := s.Get(ctx, "k"); !ok {
			b.Fatal("miss")
		}
	}
}
