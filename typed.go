package resilience

import (
	"context"
	"fmt"
	"reflect"
)

// Guard returns fn guarded by p, with fn's own shape, so business code keeps
// calling getInvoice(ctx, id) and the policy stays out of sight:
//
//	getInvoice := resilience.Guard(policy, client.GetInvoice)
//
// Each call binds its argument in a closure, which costs one allocation; the
// policy itself allocates nothing of its own. Guard panics if fn is nil. The
// returned function is safe for simultaneous use if fn is.
func Guard[A, T any](p Policy[T], fn func(context.Context, A) (T, error)) func(context.Context, A) (T, error) {
	if fn == nil {
		panic("resilience: Guard fn must not be nil")
	}
	return func(ctx context.Context, a A) (T, error) {
		return p.Do(ctx, func(ctx context.Context) (T, error) { return fn(ctx, a) })
	}
}

// Guard2 is [Guard] for functions of two arguments.
func Guard2[A, B, T any](p Policy[T], fn func(context.Context, A, B) (T, error)) func(context.Context, A, B) (T, error) {
	if fn == nil {
		panic("resilience: Guard2 fn must not be nil")
	}
	return func(ctx context.Context, a A, b B) (T, error) {
		return p.Do(ctx, func(ctx context.Context) (T, error) { return fn(ctx, a, b) })
	}
}

// GuardErr returns fn guarded by p, for calls that return only an error
// (a write, a notification). The policies see fn's call as an op that returns
// the zero T, so any Policy works: a Policy[struct{}] built for such calls, or
// a shared Policy[any]. A fallback in p that returns a nil error makes the
// guarded call succeed. GuardErr panics if fn is nil.
func GuardErr[T any](p Policy[T], fn func(context.Context) error) func(context.Context) error {
	if fn == nil {
		panic("resilience: GuardErr fn must not be nil")
	}
	op := func(ctx context.Context) (T, error) {
		var zero T
		return zero, fn(ctx)
	}
	return func(ctx context.Context) error {
		_, err := p.Do(ctx, op)
		return err
	}
}

// As returns a Policy[T] that runs each call through the shared policy p:
// one pipeline, composed once for a dependency, serves call sites of every
// result type. The result is a single layer named after p's chain, and it
// composes with typed policies like any other.
//
// As of the zero Policy[any] is the zero Policy[T]. A call through As boxes
// its result in an any, which allocates unless T is pointer-shaped, and
// builds one closure. If p returns a non-nil value that is not a T (a layer
// of p that makes up its own result, such as a fallback, can), the call
// returns the zero T and an error saying so that wraps p's error, if any.
func As[T any](p Policy[any]) Policy[T] {
	if p.first == nil {
		return Policy[T]{}
	}
	return New(p.String(), func(ctx context.Context, next Next[T]) (T, error) {
		v, err := p.Do(ctx, func(ctx context.Context) (any, error) { return next.Call(ctx) })
		if v == nil {
			var zero T
			return zero, err
		}
		t, ok := v.(T)
		if !ok {
			if err != nil {
				return t, fmt.Errorf("resilience: As[%v]: policy returned a %T: %w", reflect.TypeFor[T](), v, err)
			}
			return t, fmt.Errorf("resilience: As[%v]: policy returned a %T", reflect.TypeFor[T](), v)
		}
		return t, err
	})
}
