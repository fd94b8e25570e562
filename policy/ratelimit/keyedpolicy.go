package ratelimit

import (
	"context"

	"github.com/f0b5b96b/resilience"
)

// KeyedPolicy returns k as a layer of a resilience.Policy[T] that refuses
// at once, as [Policy] does, taking each call's token from the bucket of
// the key that key returns for the call's context (k.Limiter(key(ctx))):
// with no token there, it returns a *resilience.RefusedError (matching
// [ErrLimited] and resilience.ErrRefused, with the wait until that
// bucket's next token as RetryAfter) without running the rest of the
// chain. Put the key in the context (context.WithValue) and read it back
// in key, or derive it from what the context carries (a gRPC peer, a
// tenant's metadata). A call whose ctx is already done returns ctx.Err()
// and takes no token (key is not called).
//
// The layer is named "ratelimit(Name)", or "ratelimit" when k has no name.
// An admitted call allocates nothing but what finding its key's bucket
// does (a new key's bucket); a refusal allocates its error. KeyedPolicy
// panics if k or key is nil.
func KeyedPolicy[T any, K comparable](k *Keyed[K], key func(ctx context.Context) K) resilience.Policy[T] {
	if k == nil {
		panic("ratelimit: KeyedPolicy Keyed must not be nil")
	}
	if key == nil {
		panic("ratelimit: KeyedPolicy key must not be nil")
	}
	p := k.p
	return describe(p, false, resilience.New(p.layer, func(ctx context.Context, next resilience.Next[T]) (T, error) {
		var zero T
		if err := ctx.Err(); err != nil {
			return zero, err // the caller gave up: no token is spent
		}
		l := k.Limiter(key(ctx))
		if b, wait, _, at, ok := l.take(1, 0); !ok {
			hint := b.p.waitFor(at, wait)
			return zero, l.refuse(b.p, resilience.Refuse(ErrLimited, p.cfg.Name, hint), hint)
		}
		return next.Call(ctx)
	}))
}
