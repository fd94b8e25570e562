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
// *[resilience.RefusedError] without running the rest of the chain. Otherwise it runs
// the rest of the chain and reports the outcome: success for a nil error;
// ignored when the caller's ctx was canceled (the caller's own cancellation
// is never the dependency's failure, whatever error the op returned);
// otherwise as Config.Classify says. If the op panics (or its goroutine
// exits, as t.FailNow does), the call counts as a failure, the permit is
// released, and the panic goes on unchanged. If Config.Classify returns an
// invalid Outcome, the call panics after releasing the permit (see
// [Permit.Done]).
//
// If ctx is already done when the call arrives, the call returns ctx.Err()
// at once: the breaker is not asked and the op is not run, so an expired
// deadline is not counted against the dependency.
//
// A call that b admits while closed allocates nothing, and takes no lock
// unless it fails, is slow, or is counted in a time-based window (whose
// buckets are kept under per-shard locks).
// Policy panics if b is nil.
//
// Policy is kept from being inlined into its caller: a closure copied by
// inlining gets no inlining of its own (go.dev/issue/81380), and the call's
// fast path relies on it.
//
//go:noinline
func Policy[T any](b *Breaker) resilience.Policy[T] {
	if b == nil {
		panic("breaker: Policy breaker must not be nil")
	}
	return describe(resilience.New(b.cfg.layer(), func(ctx context.Context, next resilience.Next[T]) (v T, err error) {
		if err = ctx.Err(); err != nil {
			return v, err // the caller gave up: the breaker is not asked
		}
		w := b.word.Load()
		if wordState(w) != Closed || b.measure {
			if err = b.refuseFresh(w); err != nil {
				return v, err // open: a refusal that reads no clock
			}
			return policySlow(ctx, b, next)
		}
		// The deferred function only catches a panic (or Goexit); the
		// outcome of a call that returns is counted inline, which keeps
		// the deferred closure small.
		returned := false
		defer func() {
			if !returned {
				b.panicked(w)
			}
		}()
		v, err = next.Call(ctx)
		returned = true
		if err != nil {
			b.completeErr(ctx, admission{word: w}, err)
		} else if b.timed || !b.countSuccess(w) {
			// Not the common case: count it the slow way, without
			// trying the shard's compare-and-swap a second time.
			b.finishSlow(w, 0, 0, false, Success, nil)
		}
		return v, err
	}))
}

// panicked counts a failure for a call admitted on the closed fast path,
// with state word w, whose op panicked or whose goroutine exited.
func (b *Breaker) panicked(w uint64) {
	b.complete(admission{word: w}, false, Failure, errPanicked)
}

// policySlow is a call of the Policy adapter that the closed fast path
// does not admit: one that the breaker may refuse, or whose duration is
// measured.
func policySlow[T any](ctx context.Context, b *Breaker, next resilience.Next[T]) (v T, err error) {
	var a admission
	if err = b.admitSlow(&a); err != nil {
		return v, err
	}
	err = errPanicked // stays so only if next.Call does not return
	defer func() { b.settle(ctx, a, err) }()
	return next.Call(ctx)
}

// settle completes a call run by the Policy adapter, with the error it
// returned (errPanicked if it panicked).
func (b *Breaker) settle(ctx context.Context, a admission, err error) {
	if err != nil {
		b.completeErr(ctx, a, err)
		return
	}
	b.complete(a, true, Success, nil)
}
