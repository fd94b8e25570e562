package breaker

import (
	"context"

	"github.com/f0b5b96b/resilience"
)

// Policy returns b as a resilience.Policy[T], a layer named "breaker" or
// "breaker(name)". One breaker may back policies of several result types
// (a Policy[*Invoice] and a Policy[int]): they share its state and counts,
// as calls to one dependency should.
//
// Each call asks b for a permit. If b refuses, the call returns b's
// [*RefusedError] without running the rest of the chain. Otherwise it runs
// the rest of the chain and reports the outcome: success for a nil error;
// ignored when the caller's ctx was canceled (the caller's own cancellation
// is never the dependency's failure, whatever error the op returned);
// otherwise as Config.Classify says. If the op panics (or its goroutine
// exits, as t.FailNow does), the call counts as a failure, the permit is
// released, and the panic goes on unchanged.
//
// If ctx is already done when the call arrives, the call returns ctx.Err()
// at once: the breaker is not asked and the op is not run, so an expired
// deadline is not counted against the dependency.
//
// A call that b admits while closed takes no lock and allocates nothing.
// Policy panics if b is nil.
func Policy[T any](b *Breaker) resilience.Policy[T] {
	if b == nil {
		panic("breaker: Policy breaker must not be nil")
	}
	return resilience.New(b.cfg.layer, func(ctx context.Context, next resilience.Next[T]) (v T, err error) {
		// The generic body stays minimal: non-generic code is compiled (and
		// inlined) here, in package breaker, rather than in every package
		// that instantiates Policy.
		a, err := b.enter(ctx)
		if err != nil {
			return v, err
		}
		err = errPanicked // stays so only if next.Call does not return
		defer b.settle(ctx, a, &err)
		return next.Call(ctx)
	})
}

// enter admits a call of the Policy adapter, unless ctx is already done.
func (b *Breaker) enter(ctx context.Context) (admission, error) {
	if err := ctx.Err(); err != nil {
		return admission{}, err
	}
	if w := b.word.Load(); wordState(w) == Closed && !b.cfg.measure {
		return admission{word: w}, nil // admit's common case, inline
	}
	var a admission
	err := b.admitSlow(&a)
	return a, err
}

// settle completes a call run by the Policy adapter, with the error it
// returned (errPanicked if it panicked).
func (b *Breaker) settle(ctx context.Context, a admission, errp *error) {
	o := Success
	if err := *errp; err != nil {
		o = b.outcome(ctx, err)
	}
	b.complete(a, true, o)
}
