package ratelimit

import (
	"context"

	"github.com/f0b5b96b/resilience"
)

// Policy returns l as a layer of a resilience.Policy[T] that refuses at
// once: each call through it takes one token, as [Limiter.Allow] does, and
// runs the rest of the chain; with no token there, it returns a
// *resilience.RefusedError (matching [ErrLimited] and resilience.ErrRefused, with the
// wait until the next token as RetryAfter) without running the rest of the
// chain. A refusal counts in [Stats].Refused and is reported as
// [EventRefused], as Allow's are. A call whose ctx is already done returns
// ctx.Err() and takes no token. This sheds excess load fast; to smooth it out by waiting instead,
// use [WaitPolicy].
//
// The layer is named "ratelimit(Name)", or "ratelimit" when l has no name.
// Any number of policies, of any result types, may share one l. An
// admitted call allocates nothing; a refusal allocates its error. Policy
// panics if l is nil.
func Policy[T any](l *Limiter) resilience.Policy[T] {
	p := policyParams(l)
	return describe(p, false, resilience.New(p.layer, func(ctx context.Context, next resilience.Next[T]) (T, error) {
		var zero T
		if err := ctx.Err(); err != nil {
			return zero, err // the caller gave up: no token is spent
		}
		if b, wait, _, at, ok := l.take(1, 0); !ok {
			hint := b.p.waitFor(at, wait)
			return zero, l.refuse(b.p, resilience.Refuse(ErrLimited, p.cfg.Name, hint), hint)
		}
		return next.Call(ctx)
	}))
}

// WaitPolicy returns l as a layer of a resilience.Policy[T] that waits:
// each call through it takes one token with [Limiter.Wait] — waiting for it
// if the wait fits the call's deadline and l's [Config.MaxWait] — and then
// runs the rest of the chain. A refused call returns Wait's error without
// running the rest of the chain.
//
// The layer is named "ratelimit(Name)", or "ratelimit" when l has no name.
// A call that does not wait allocates nothing. WaitPolicy panics if l is
// nil.
func WaitPolicy[T any](l *Limiter) resilience.Policy[T] {
	p := policyParams(l)
	return describe(p, true, resilience.New(p.layer, func(ctx context.Context, next resilience.Next[T]) (T, error) {
		if err := l.Wait(ctx); err != nil {
			var zero T
			return zero, err
		}
		return next.Call(ctx)
	}))
}

func policyParams(l *Limiter) *params {
	if l == nil {
		panic("ratelimit: Policy of a nil *Limiter")
	}
	return l.cur.Load().p // for the name, which changes never
}
