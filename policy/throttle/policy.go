package throttle

import (
	"context"
	"errors"

	"github.com/f0b5b96b/resilience"
)

// Policy returns t as a layer of a resilience.Policy[T], named
// "throttle(Name)" (or "throttle" when t has no name). Each call through
// it asks [Throttler.Allow]; a refused call returns the refusal (a
// *resilience.RefusedError matching [ErrThrottled]) without running the
// rest of the chain. An allowed call runs the rest of the chain and ends
// its permit with the error it returns ([Permit.Done]); a panic ends it as
// a request not accepted and goes on up unchanged. A call whose ctx is
// already done returns ctx.Err() at once and is not counted.
//
// Put it inside a retry, with the other guards: each attempt is then a
// request, as the SRE book counts them, and a throttled attempt is a
// refusal the retry may try again after its backoff. Any number of
// policies, of any result types, may share one t. A call
// through the policy allocates nothing. Policy panics if t is nil.
func Policy[T any](t *Throttler) resilience.Policy[T] {
	if t == nil {
		panic("throttle: Policy of a nil *Throttler")
	}
	name := "throttle"
	if t.name != "" {
		name += "(" + t.name + ")"
	}
	return describe(resilience.New(name, func(ctx context.Context, next resilience.Next[T]) (T, error) {
		if err := ctx.Err(); err != nil {
			var zero T
			return zero, err
		}
		p, err := t.Allow()
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

// errPanicked ends the permit of a call that panicked: not accepted.
var errPanicked = errors.New("throttle: the call panicked")
