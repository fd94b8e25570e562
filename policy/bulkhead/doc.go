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
//     [WithName], [WithObserver], [WithClock]) configure it. A [Config] read at run time
//     (it reads and writes JSON) is checked with [Config.Validate] and
//     given with [WithConfig], which sets its non-zero fields only: a zero
//     field means the default, so New(5, WithConfig(Config{MaxQueue: 1}))
//     has 5 slots and a queue of 1.
//   - [Bulkhead.Acquire] and [Bulkhead.Release] take and give back a slot,
//     for code that calls the dependency itself; [Bulkhead.TryAcquire]
//     takes one only if it is free now.
//   - [Policy] makes a Bulkhead a layer of a resilience.Policy[T].
//   - [Bulkhead.SetLimit] changes the number of slots while it runs
//     (raised, it admits queued callers at once; lowered, it revokes no
//     running call); [Bulkhead.Limit] reads it.
//   - [Bulkhead.InFlight] and [Bulkhead.Queued] report for metrics;
//     [Bulkhead.Stats] adds the limit and the refusals since New, and
//     [Bulkhead.Snapshot] gives them in the shape of every guard, for a
//     telemetry.Registry. [WithObserver] reports refusals and queued calls
//     admitted as telemetry events ([EventRefused],
//     [EventQueuedAdmitted]; [Kind] is the kind of the events and
//     snapshots); a call that finds a free slot emits nothing, and with
//     no observer events cost nothing.
//
// # Settings
//
// Each option sets the [Config] field of its name; a zero field means the
// default below. No setting takes resilience.Off: the queue and its wait
// are off unless set.
//
//	option, field                default                          unit
//	(n), MaxConcurrent           New's argument, 1 to 2^31-1      calls at once (slots)
//	WithMaxQueue, MaxQueue       0: no queue                      callers waiting, first come, first served
//	WithMaxWait, MaxWait         0: no limit but the context      time.Duration (needs MaxQueue >= 1);
//	                                                              then ErrQueueTimeout
//	WithName, Name               unnamed                          in errors and in the layer "bulkhead(Name)"
//	WithClock, Clock             clock.Real()                     times MaxWait
//	WithObserver, Observer       nil: no events                   not in JSON
//
// [Bulkhead.SetLimit] changes MaxConcurrent at run time.
//
// # Resizing and fairness
//
// Raised by SetLimit, the new slots go at once to queued callers, first in
// line first; lowered, no running call is revoked, and slots that come
// back go to nobody until fewer than the limit run, then to the queue in
// order. Under contention a caller refused at the very instant a slot is
// released may be refused while one arriving just after gets that slot (as
// sync.Mutex.TryLock may fail while the mutex is being unlocked): the
// bulkhead never runs more than its limit, loses no slot and lets nobody
// pass a queued caller. Slots are released exactly once, panics included.
//
// # Events
//
// With an observer, the bulkhead reports bulkhead.refused for each
// refusal (TryAcquire's false included; Err, and Wait = the time spent in
// the queue) and bulkhead.queued_admitted when a queued call gets a slot
// (Wait = the time queued); nothing for a call that gets a free slot.
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
// add each: a caller adds itself to the count and gives its unit back if
// that went over the limit) and allocates nothing, and so is a refusal; a
// caller that queues allocates its place in the line and takes a lock, as
// does the release that hands it a slot.
// Durations are [time.Duration] values (nanoseconds).
package bulkhead
