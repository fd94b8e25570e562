// Package chaos injects faults into a pipeline on purpose, at a rate, to
// check in a test, a staging run or a controlled production experiment
// that the pipeline's other policies (retry, breaker, timeout, fallback)
// and its callers cope: chaos engineering.
//
// Three policies, each a resilience.Policy[T] made with resilience.New:
//
//   - [Fault] ("chaos.fault"): the call fails with an error of your making
//     (or runs a side effect of your making and goes on), without reaching
//     the dependency;
//   - [Latency] ("chaos.latency"): the call waits, then goes on;
//   - [Result] ("chaos.result"): the call returns a result of your making
//     without reaching the dependency.
//
// Which calls get chaos is decided by an [Injector]: a rate in [0, 1] and
// an on/off switch, both changeable at run time from any goroutine, shared
// by any number of chaos policies. While the injector is off (or its rate
// is 0) a chaos policy costs one atomic load and no allocation: leave it
// in the production pipeline, and switch it on for an experiment. In a
// test, seed it with [WithRand] so that the same calls get chaos on every
// run. A [Config] read at run time (it reads and writes JSON) is checked
// with [Config.Validate] and given with [WithConfig].
//
// An Injector is a telemetry.Guard: named with [WithName], it registers in
// a telemetry.Registry, and its [Injector.Snapshot] (kind [Kind], state
// [StateOn] or [StateOff]) shows the calls it decided while on and its
// injections by type, in the exporters, the dashboard and
// resiliencehttp.Health. [WithObserver] reports each injection as an event
// of this package: [EventFault], [EventLatency], [EventResult], and
// [EventInjected] for calls of [Injector.Inject] of your own. While the
// injector is off nothing is counted or reported.
//
// Put chaos policies innermost, next to the dependency, so that the other
// policies see an injected fault as one of the dependency's:
//
//	in := chaos.NewInjector(0.05)
//	p := resilience.Then(
//		retry.New[int](),
//		breaker.Policy[int](b),
//		timeout.New[int](time.Second),
//		chaos.Latency[int](in, nil, func() time.Duration { return 2 * time.Second }),
//	)
//	in.Disable() // until the experiment starts
//
// The design follows the chaos strategies of .NET's Polly (fault, latency,
// outcome), with a shared injector in place of per-strategy options.
package chaos
