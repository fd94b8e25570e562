// Package bulkhead bounds how many calls to one dependency run at once, so
// that a slow or hung dependency ties up a bounded share of the caller
// (its goroutines, connections, memory) instead of all of it. A
// [Bulkhead] is a guard shared by every call to its dependency, whatever
// the calls' result types.
//
// A call holds a slot while it runs. When every slot is held, callers wait
// in an optional bounded queue, served first come, first served; beyond
// the queue they are refused at once. A queued caller leaves as soon as its
// context ends, and after an optional maximum wait.
//
// # Entry points
//
//   - [New] creates a Bulkhead; [Option]s ([WithMaxQueue], [WithMaxWait],
//     [WithName], [WithClock], [WithConfig]) or a [Config] configure it.
//   - [Bulkhead.Acquire] and [Bulkhead.Release] take and give back a slot,
//     for code that calls the dependency itself; [Bulkhead.TryAcquire]
//     takes one only if it is free now.
//   - [Policy] makes a Bulkhead a layer of a resilience.Policy[T].
//   - [Bulkhead.InFlight] and [Bulkhead.Queued] report for metrics.
//
// # Errors
//
// A refusal is a *resilience.RefusedError carrying the bulkhead's name; it
// matches [ErrFull] and resilience.ErrRefused through errors.Is. A caller whose
// context has ended, before the call or while it waits, gets ctx.Err(),
// which is the caller's own doing and not the dependency's failure: a done
// context is looked at first, as golang.org/x/sync/semaphore does, so it
// never takes a slot. Invalid configuration panics in
// New with a message naming the field and the value; [Config.Validate]
// returns the same message as an error.
//
// # Cost
//
// Taking and giving back a slot while nobody waits is lock-free (one atomic
// compare-and-swap each) and allocates nothing, and so is a refusal; a
// caller that queues allocates its place in the line and takes a lock.
// Durations are [time.Duration] values (nanoseconds).
package bulkhead
