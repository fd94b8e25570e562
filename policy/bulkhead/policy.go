package bulkhead

import (
	"context"

	"github.com/f0b5b96b/resilience"
)

// Policy returns b as a layer of a resilience.Policy[T], named
// "bulkhead(Name)" (or "bulkhead" when b has no name). Each call through it
// takes a slot with [Bulkhead.Acquire] — waiting in b's queue if b has one —
// runs the rest of the chain, and gives the slot back, also when the rest of
// the chain panics (the panic then goes on up unchanged). A refused call
// returns Acquire's error (a *resilience.RefusedError, or ctx.Err()) without
// running the rest of the chain; in particular a call whose ctx is already
// done returns ctx.Err() at once, takes no slot and runs nothing, as
// breaker.Policy and ratelimit.Policy do.
//
// Any number of policies, of any result types, may share one b: they share
// its slots. A call through the policy allocates nothing when it does not
// queue. Policy panics if b is nil.
func Policy[T any](b *Bulkhead) resilience.Policy[T] {
	if b == nil {
		panic("bulkhead: Policy of a nil *Bulkhead")
	}
	name := "bulkhead"
	if b.cfg.Name != "" {
		name += "(" + b.cfg.Name + ")"
	}
	return describe(b, resilience.New(name, func(ctx context.Context, next resilience.Next[T]) (T, error) {
		if err := b.Acquire(ctx); err != nil {
			var zero T
			return zero, err
		}
		defer b.Release()
		return next.Call(ctx)
	}))
}
