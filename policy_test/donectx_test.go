package policytest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// Every built-in policy called with a context that is already done returns
// ctx.Err() at once, as it is, without running the rest of the chain: the
// caller has given up, so nothing is asked, waited for, counted or run.
func TestDoneContextAtEntry(t *testing.T) {
	policies := []struct {
		name string
		p    resilience.Policy[int]
	}{
		{"breaker", breaker.Policy[int](breaker.New())},
		{"bulkhead", bulkhead.Policy[int](bulkhead.New(1))},
		{"ratelimit", ratelimit.Policy[int](ratelimit.New(1, 1))},
		{"retry", retry.New[int]()},
		{"retry with a budget", retry.New[int](retry.WithBudget(retry.NewBudget(retry.BudgetConfig{})))},
		{"timeout", timeout.New[int](time.Second)},
		{"timeout abandoning", timeout.New[int](time.Second, timeout.WithAbandon(true))},
		{"hedge", hedge.New[int](time.Millisecond)},
	}
	contexts := []struct {
		name string
		ctx  func() context.Context
	}{
		{"canceled", func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}},
		{"deadline exceeded", func() context.Context {
			ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
			cancel()
			return ctx
		}},
		{"canceled with a cause", func() context.Context {
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(errOp)
			return ctx
		}},
	}
	for _, p := range policies {
		for _, c := range contexts {
			ctx := c.ctx()
			var calls atomic.Int32
			v, err := p.p.Do(ctx, func(context.Context) (int, error) {
				calls.Add(1)
				return 7, nil
			})
			if n := calls.Load(); n != 0 || v != 0 || err != ctx.Err() {
				t.Errorf("%s, %s ctx: Do = %d, %v after %d op calls; want 0, %v (ctx.Err()) and no call", p.name, c.name, v, err, n, ctx.Err())
			}
		}
	}
}
