package chaos

import (
	"context"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
)

// Fault returns a policy, named "chaos.fault", that injects a fault into
// the calls in picks: for each call that gets chaos, it calls fault(ctx);
// a non-nil error is the call's error, and the rest of the chain (the
// dependency) is not called. A nil error lets the call go on, so fault may
// also be a behaviour of its own (count, log, cancel something) rather than
// a failure. Calls that get no chaos go on untouched.
//
// fault is called from every goroutine that calls through the policy, at
// once: it must be safe for that. The policy allocates nothing of its own;
// return a prepared error value to keep a failing call free of allocations.
// Fault panics if in or fault is nil.
func Fault[T any](in *Injector, fault func(ctx context.Context) error) resilience.Policy[T] {
	if in == nil || fault == nil {
		panic("chaos: Fault needs an Injector and a fault func, got nil")
	}
	return describe(resilience.Layer{Kind: resilience.KindOther, MaxWait: resilience.Off}, resilience.New("chaos.fault", func(ctx context.Context, next resilience.Next[T]) (T, error) {
		if in.decide() {
			err := fault(ctx)
			in.injected(&in.faults, EventFault, err, 0)
			if err != nil {
				var zero T
				return zero, err
			}
		}
		return next.Call(ctx)
	}))
}

// Latency returns a policy, named "chaos.latency", that injects latency
// into the calls in picks: for each call that gets chaos it waits delay()
// on clk, then goes on with the rest of the chain. If ctx ends during the
// wait, the call returns ctx's error without going on. A delay() <= 0 does
// not wait. Calls that get no chaos go on untouched.
//
// delay is called from every goroutine that calls through the policy, at
// once: it must be safe for that. A nil clk means clock.Real(). Latency
// panics if in or delay is nil.
func Latency[T any](in *Injector, clk clock.Clock, delay func() time.Duration) resilience.Policy[T] {
	if in == nil || delay == nil {
		panic("chaos: Latency needs an Injector and a delay func, got nil")
	}
	if clk == nil {
		clk = clock.Real()
	}
	return describe(resilience.Layer{Kind: resilience.KindOther, MaxWait: resilience.Off}, resilience.New("chaos.latency", func(ctx context.Context, next resilience.Next[T]) (T, error) {
		if in.decide() {
			d := delay()
			in.injected(&in.latencies, EventLatency, nil, max(d, 0))
			if d > 0 {
				if err := clk.Sleep(ctx, d); err != nil {
					var zero T
					return zero, err
				}
			}
		}
		return next.Call(ctx)
	}))
}

// Result returns a policy, named "chaos.result", that makes up the result
// of the calls in picks: for each call that gets chaos it returns
// result(ctx), a value and an error of your making (a stale value, a wrong
// one, a 500 response), and the rest of the chain is not called. Calls that
// get no chaos go on untouched.
//
// result is called from every goroutine that calls through the policy, at
// once: it must be safe for that. Result panics if in or result is nil.
func Result[T any](in *Injector, result func(ctx context.Context) (T, error)) resilience.Policy[T] {
	if in == nil || result == nil {
		panic("chaos: Result needs an Injector and a result func, got nil")
	}
	return describe(resilience.Layer{Kind: resilience.KindOther, MaxWait: resilience.Off}, resilience.New("chaos.result", func(ctx context.Context, next resilience.Next[T]) (T, error) {
		if in.decide() {
			v, err := result(ctx)
			in.injected(&in.results, EventResult, err, 0)
			return v, err
		}
		return next.Call(ctx)
	}))
}
