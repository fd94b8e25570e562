package resiliencetest

import (
	"context"
	"sync/atomic"
)

// Dependency is a fake dependency for tests: an op, [Dependency.Call], that
// runs a [Fault] for each call and counts the calls that reached it.
//
// Create one with [NewDependency]. A Dependency is safe for simultaneous
// use by multiple goroutines: calls, [Dependency.Set] and the counters may
// run at once.
type Dependency[T any] struct {
	value T
	fault atomic.Pointer[Fault]

	calls, successes, failures, panics atomic.Int64
	inFlight, maxInFlight              atomic.Int64
}

// NewDependency returns a dependency whose calls run f and, when f lets them
// succeed, return value.
func NewDependency[T any](value T, f Fault) *Dependency[T] {
	d := &Dependency[T]{value: value}
	d.fault.Store(&f)
	return d
}

// Call is the dependency's op: pass it to a pipeline, as in
// p.Do(ctx, dep.Call). It counts the call, runs the dependency's fault under
// ctx and returns the dependency's value, or the zero T and the fault's
// error. A panic of the fault goes on up to the caller, counted.
func (d *Dependency[T]) Call(ctx context.Context) (T, error) {
	d.calls.Add(1)
	n := d.inFlight.Add(1)
	for m := d.maxInFlight.Load(); n > m && !d.maxInFlight.CompareAndSwap(m, n); m = d.maxInFlight.Load() {
	}
	panicked := true
	defer func() {
		d.inFlight.Add(-1)
		if panicked {
			d.panics.Add(1)
		}
	}()
	err := d.fault.Load().Inject(ctx)
	panicked = false
	if err != nil {
		d.failures.Add(1)
		var zero T
		return zero, err
	}
	d.successes.Add(1)
	return d.value, nil
}

// Set replaces the dependency's fault, for the calls that arrive from now on
// (calls in progress keep theirs): the dependency goes down, or recovers,
// when the test says.
func (d *Dependency[T]) Set(f Fault) { d.fault.Store(&f) }

// Calls returns the number of calls that reached the dependency so far,
// finished or not.
func (d *Dependency[T]) Calls() int64 { return d.calls.Load() }

// Counts returns the dependency's counters. Each is read atomically, but
// not all at one instant: while calls are in progress they may disagree
// (Calls may already count a call that no other counter does yet).
func (d *Dependency[T]) Counts() Counts {
	return Counts{
		Calls:       d.calls.Load(),
		Successes:   d.successes.Load(),
		Failures:    d.failures.Load(),
		Panics:      d.panics.Load(),
		InFlight:    d.inFlight.Load(),
		MaxInFlight: d.maxInFlight.Load(),
	}
}

// Counts are the counters of a [Dependency]. Once every call has returned,
// Calls = Successes + Failures + Panics.
type Counts struct {
	Calls       int64 // calls that reached the dependency
	Successes   int64 // calls that returned without an error
	Failures    int64 // calls that returned an error (hangs that ended included)
	Panics      int64 // calls that panicked
	InFlight    int64 // calls in progress now
	MaxInFlight int64 // the most calls in progress at once so far
}
