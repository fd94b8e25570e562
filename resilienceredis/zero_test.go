package resilienceredis

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/cache"
	"github.com/google/go-cmp/cmp"
)

// The zero value of every guard and store is not usable: each exported
// method (and each policy built on one) panics on the caller's goroutine
// with a message naming the constructor, never with a bare nil
// dereference nor in a goroutine of the library (which no caller could
// recover); Close, "safe to call at any time", does nothing and returns
// nil. The zero Permit and StoredError are usable: they report nothing.
func TestZeroValues(t *testing.T) {
	ctx := context.Background()
	zero := func(typ, method, ctor string) string {
		return "resilienceredis: " + typ + "." + method + " on a zero " + typ + ": create one with " + ctor
	}
	lim := func(m string) string { return zero("Limiter", m, "NewLimiter") }
	keyed := func(m string) string { return zero("KeyedLimiter", m, "NewKeyedLimiter") }
	brk := func(m string) string { return zero("Breaker", m, "NewBreaker") }
	budget := func(m string) string { return zero("RetryBudget", m, "NewRetryBudget") }
	store := func(m string) string { return zero("CacheStore", m, "NewCacheStore") }
	const none = "no panic, nil"
	closed := func(err error) error { // Close must return nil
		if err != nil {
			panic(fmt.Sprintf("Close returned %v", err))
		}
		panic(none)
	}
	entry := cache.Entry[int]{Value: 1, Expires: time.Now().Add(time.Hour), Discard: time.Now().Add(time.Hour)}
	for _, tt := range []struct {
		name string
		f    func()
		want string
	}{
		{"Limiter.Name", func() { var l Limiter; l.Name() }, lim("Name")},
		{"Limiter.Allow", func() { var l Limiter; l.Allow(ctx) }, lim("Allow")},
		{"Limiter.AllowN", func() { var l Limiter; l.AllowN(ctx, 1) }, lim("AllowN")},
		{"Limiter.AllowAtMost", func() { var l Limiter; l.AllowAtMost(ctx, 1) }, lim("AllowAtMost")},
		{"Limiter.Wait", func() { var l Limiter; l.Wait(ctx) }, lim("Wait")},
		{"Limiter.WaitN", func() { var l Limiter; l.WaitN(ctx, 1) }, lim("WaitN")},
		{"Limiter.Check", func() { var l Limiter; l.Check(ctx) }, lim("Check")},
		{"Limiter.Snapshot", func() { var l Limiter; l.Snapshot() }, lim("Snapshot")},
		{"Limiter.Close", func() { var l Limiter; closed(l.Close()) }, none},
		{"LimiterPolicy", func() { LimiterPolicy[int](&Limiter{}) }, "resilienceredis: LimiterPolicy of a zero Limiter: create one with NewLimiter"},
		{"WaitPolicy", func() { WaitPolicy[int](&Limiter{}) }, "resilienceredis: WaitPolicy of a zero Limiter: create one with NewLimiter"},

		{"KeyedLimiter.Name", func() { var k KeyedLimiter; k.Name() }, keyed("Name")},
		{"KeyedLimiter.Limiter", func() { var k KeyedLimiter; k.Limiter("a") }, keyed("Limiter")},
		{"KeyedLimiter.Allow", func() { var k KeyedLimiter; k.Allow(ctx, "a") }, keyed("Allow")},
		{"KeyedLimiter.AllowAtMost", func() { var k KeyedLimiter; k.AllowAtMost(ctx, "a", 1) }, keyed("AllowAtMost")},
		{"KeyedLimiter.Check", func() { var k KeyedLimiter; k.Check(ctx) }, keyed("Check")},
		{"KeyedLimiter.Snapshot", func() { var k KeyedLimiter; k.Snapshot() }, keyed("Snapshot")},
		{"KeyedLimiter.Close", func() { var k KeyedLimiter; closed(k.Close()) }, none},

		{"Breaker.Name", func() { var b Breaker; b.Name() }, brk("Name")},
		{"Breaker.State", func() { var b Breaker; b.State() }, brk("State")},
		{"Breaker.Allow", func() { var b Breaker; b.Allow() }, brk("Allow")},
		{"Breaker.RulesMismatch", func() { var b Breaker; b.RulesMismatch() }, brk("RulesMismatch")},
		{"Breaker.Reset", func() { var b Breaker; b.Reset(ctx) }, brk("Reset")},
		{"Breaker.Shared", func() { var b Breaker; b.Shared(ctx) }, brk("Shared")},
		{"Breaker.Snapshot", func() { var b Breaker; b.Snapshot() }, brk("Snapshot")},
		{"Breaker.Close", func() { var b Breaker; closed(b.Close()) }, none},
		{"BreakerPolicy", func() { BreakerPolicy[int](&Breaker{}) }, "resilienceredis: BreakerPolicy of a zero Breaker: create one with NewBreaker"},

		{"RetryBudget.Name", func() { var b RetryBudget; b.Name() }, budget("Name")},
		{"RetryBudget.Deposit", func() { var b RetryBudget; b.Deposit() }, budget("Deposit")},
		{"RetryBudget.Withdraw", func() { var b RetryBudget; b.Withdraw() }, budget("Withdraw")},
		{"RetryBudget.Snapshot", func() { var b RetryBudget; b.Snapshot() }, budget("Snapshot")},
		{"RetryBudget.Close", func() { var b RetryBudget; closed(b.Close()) }, none},

		{"CacheStore.Name", func() { var s CacheStore[int]; s.Name() }, store("Name")},
		{"CacheStore.Get", func() { var s CacheStore[int]; s.Get(ctx, "k") }, store("Get")},
		{"CacheStore.Set", func() { var s CacheStore[int]; s.Set(ctx, "k", entry) }, store("Set")},
		{"CacheStore.Set past Discard", func() { var s CacheStore[int]; s.Set(ctx, "k", cache.Entry[int]{}) }, store("Set")},
		{"CacheStore.Delete", func() { var s CacheStore[int]; s.Delete(ctx, "k") }, store("Delete")},
		{"CacheStore.Purge", func() { var s CacheStore[int]; s.Purge(ctx) }, store("Purge")},

		{"Permit.Done", func() { var p Permit; p.Done(errors.New("x")); panic(none) }, none},
		{"Permit.Report", func() { var p Permit; p.Report(breaker.Failure); panic(none) }, none},
		{"StoredError.Error", func() { var e StoredError; _ = e.Error(); panic(none) }, none},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := func() (msg string) {
				defer func() {
					if r := recover(); r != nil {
						msg = fmt.Sprint(r)
					}
				}()
				tt.f()
				return "returned" // a method that should panic did not
			}()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("panic mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
