package adaptive

import (
	"context"
	"errors"

	"github.com/f0b5b96b/resilience"
)

// Policy returns l as a layer of a resilience.Policy[T], named
// "adaptive(Name)" (or "adaptive" when l has no name). Each call through
// it takes a permit with [Limiter.Acquire] (waiting in l's queue if l has
// one), runs the rest of the chain and ends the permit with its error
// ([Permit.Done]); a panic in the rest of the chain ends it as a failure
// and goes on up unchanged. A refused call returns Acquire's error (a
// *resilience.RefusedError, or ctx.Err()) without running the rest of
// the chain; a call whose ctx is already done returns ctx.Err() at once.
//
// Any number of policies, of any result types, may share one l: they
// share its limit. A call through the policy allocates nothing when it
// does not queue.
//
// On a server, give it to resiliencehttp.Middleware (a
// Policy[struct{}]) or to a gRPC interceptor: requests over the limit are
// answered 503 at once (load shedding), and a request's priority comes
// from its context ([ContextWithPriority], set by a middleware in front).
// Policy panics if l is nil.
func Policy[T any](l *Limiter) resilience.Policy[T] {
	if l == nil {
		panic("adaptive: Policy of a nil *Limiter")
	}
	name := "adaptive"
	if l.cfg.Name != "" {
		name += "(" + l.cfg.Name + ")"
	}
	return describe(l, resilience.New(name, func(ctx context.Context, next resilience.Next[T]) (T, error) {
		p, err := l.Acquire(ctx)
		if err != nil {
			var zero T
			return zero, err
		}
		ok := false
		defer func() {
			if !ok {
				p.Done(errPanicked)
			}
		}()
		v, err := next.Call(ctx)
		ok = true
		p.Done(err)
		return v, err
	}))
}

// errPanicked ends the permit of a call that panicked: a failure.
var errPanicked = errors.New("adaptive: the call panicked")
