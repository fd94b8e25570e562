package policytest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/adaptive"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/cache"
	"github.com/f0b5b96b/resilience/policy/chaos"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/throttle"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// successPath is one policy's success path, with no observer and no
// tracer: ctx is the context of each call (made once, outside the
// measurement).
type successPath struct {
	name string
	p    resilience.Policy[int]
	ctx  context.Context
}

// successPaths builds every policy's success path, and a full pipeline of
// them. A call's op returns 1, nil.
func successPaths(t testing.TB) []successPath {
	t.Helper()
	bg := context.Background()
	b := breaker.New(breaker.WithName("b"))
	kb := breaker.NewKeyed[string](breaker.WithName("kb"))
	keyOf := func(context.Context) string { return "k" }
	bh := bulkhead.New(8, bulkhead.WithName("bh"))
	rl := ratelimit.New(1e9, 1<<20, ratelimit.WithName("rl"))
	krl := ratelimit.NewKeyed[string](1e9, 1<<20, ratelimit.WithName("krl"))
	al := adaptive.New(adaptive.WithName("al"))
	th := throttle.New(throttle.WithName("th"))
	in := chaos.NewInjector(0, chaos.WithName("chaos"))
	c := cache.New[int](time.Hour, cache.WithName("c"))
	hit := cache.Key(bg, "k")
	if _, err := c.Policy().Do(hit, func(context.Context) (int, error) { return 1, nil }); err != nil {
		t.Fatal(err)
	}
	fault := errors.New("injected")
	return []successPath{
		{"breaker", breaker.Policy[int](b), bg},
		{"breaker.Keyed", breaker.KeyedPolicy[int](kb, keyOf), bg},
		{"bulkhead", bulkhead.Policy[int](bh), bg},
		{"ratelimit", ratelimit.Policy[int](rl), bg},
		{"ratelimit.Keyed", resilience.New("keyed-limit", func(ctx context.Context, next resilience.Next[int]) (int, error) {
			if !krl.Allow(keyOf(ctx)) { // a Keyed has no Policy: its Allow is the call's path
				return 0, ratelimit.ErrLimited
			}
			return next.Call(ctx)
		}), bg},
		{"adaptive", adaptive.Policy[int](al), bg},
		{"throttle", throttle.Policy[int](th), bg},
		{"chaos", chaos.Fault[int](in, func(context.Context) error { return fault }), bg},
		{"retry", retry.New[int](retry.WithName("r")), bg},
		{"timeout", timeout.New[int](time.Second), bg},
		{"hedge", hedge.New[int](time.Second), bg},
		{"cache hit", c.Policy(), hit},
		{"pipeline", resilience.Then(
			resilience.Fallback(func(context.Context, error) (int, error) { return 0, nil }),
			c.Policy(), // no key in bg: bypassed, the call goes through every layer
			retry.New[int](retry.WithName("p")),
			breaker.Policy[int](b),
			bulkhead.Policy[int](bh),
			ratelimit.Policy[int](rl),
			adaptive.Policy[int](al),
			throttle.Policy[int](th),
			chaos.Fault[int](in, func(context.Context) error { return fault }),
		), bg},
		{"pipeline with timeout and hedge", resilience.Then(
			resilience.Fallback(func(context.Context, error) (int, error) { return 0, nil }),
			retry.New[int](retry.WithName("p")),
			hedge.New[int](time.Second),
			breaker.Policy[int](b),
			bulkhead.Policy[int](bh),
			timeout.New[int](time.Second),
		), bg},
	}
}

// documentedAllocs are the allocations that a success path makes by its
// documentation, measured here: a timeout's context.WithTimeout; a
// hedge's cancellable context, timer and record of the race; and both in
// a pipeline. Every other path makes none.
func documentedAllocs() map[string]float64 {
	bg := context.Background()
	withTimeout := testing.AllocsPerRun(100, func() {
		_, cancel := context.WithTimeout(bg, time.Second)
		cancel()
	})
	withCancel := testing.AllocsPerRun(100, func() {
		_, cancel := context.WithCancel(bg)
		cancel()
	})
	nested := testing.AllocsPerRun(100, func() { // a timeout under a hedge's context
		hctx, hcancel := context.WithCancel(bg)
		_, cancel := context.WithTimeout(hctx, time.Second)
		cancel()
		hcancel()
	})
	timer := testing.AllocsPerRun(100, func() { time.NewTimer(time.Second).Stop() })
	const record = 1 // the hedge's record of the race
	return map[string]float64{
		"timeout":                         withTimeout,
		"hedge":                           withCancel + timer + record,
		"pipeline with timeout and hedge": nested + timer + record,
	}
}

func succeed(context.Context) (int, error) { return 1, nil }

// With no observer and no tracer, the success path of every policy, and
// of a pipeline of them, allocates nothing: any allocation fails the
// test. The timeout and the hedge allocate their contexts and timers (as
// their documentation says): for them, and a pipeline holding them, any
// allocation beyond those fails it.
func TestSuccessPathsDoNotAllocate(t *testing.T) {
	allowed := documentedAllocs()
	for _, sp := range successPaths(t) {
		if _, err := sp.p.Do(sp.ctx, succeed); err != nil {
			t.Fatalf("%s: %v", sp.name, err)
		}
		if n := testing.AllocsPerRun(200, func() { _, _ = sp.p.Do(sp.ctx, succeed) }); n > allowed[sp.name] {
			t.Errorf("%s (%s): %v allocs per successful call, want %v", sp.name, sp.p, n, allowed[sp.name])
		}
	}
}

func BenchmarkSuccessPath(b *testing.B) {
	for _, sp := range successPaths(b) {
		b.Run(sp.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = sp.p.Do(sp.ctx, succeed)
			}
		})
	}
}
