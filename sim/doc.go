// Package sim is a deterministic discrete-event simulator of a fleet of
// clients calling a server through real pipelines of this library, in
// virtual time, so that a user compares pipelines under load spikes and
// outages by numbers and by looking, in milliseconds of wall-clock time.
//
// The pipelines are the real policies — breaker, retry, retry budget, rate
// limiter, timeout — not models of them: a [PolicySet] builds its pipeline
// on the run's clock ([Env.Clock]), a clock.Clock in virtual time, on which
// the policies wait as they would on the real clock. The [Server] is a
// model: latency Base + Slope × calls in progress, a Capacity, scripted
// [Outage]s. [Clients] are closed loops: each calls, waits for the answer,
// pauses, calls again.
//
//	res := sim.Run(scenario, sim.PolicySet[int]{Name: "retry", Build: func(env *sim.Env) resilience.Policy[int] {
//		return retry.New[int](retry.WithClock(env.Clock()),
//			retry.WithBackoff(backoff.Exponential(10*time.Millisecond, 2, time.Second).
//				WithJitter(backoff.Full).WithRand(env.Rand())))
//	}})
//	fmt.Println(res.Amplification())
//
// # Determinism
//
// Every simulated call runs on a goroutine of its own, but only one
// goroutine runs at a time: the scheduler hands a baton to one call, which
// runs until it waits on the run's clock (Sleep) or ends, and hands it
// back; then the scheduler takes the next event from its queue, in order of
// virtual time (events of the same time in the order they were queued): a
// call to wake, or a callback to run (an AfterFunc, such as a timeout's,
// runs on the scheduler, between calls). Random draws come from sources
// seeded by [Scenario.Seed]. So the same scenario, policy set and seed give
// the same [Result], on any machine, under any GOMAXPROCS.
//
// # What can be simulated
//
// A pipeline may wait only through the clock's Sleep and AfterFunc: retry,
// breaker, retry budget, rate limiters (Policy and WaitPolicy), timeout
// (without WithAbandon), bulkhead without a queue, fallback, chaos, and
// layers of your own that do the same. Policies that start goroutines or
// wait on one another — hedge, a bulkhead queue, a timeout WithAbandon —
// cannot be stepped one at a time: the clock's NewTimer panics, and a call
// blocked on something else for 10 s of wall-clock time makes [Run] panic
// with a message saying so. A jittered backoff schedule must draw from
// [Env.Rand] (WithRand): the default source would make runs differ.
//
// # Output
//
// A [Result] has totals, the amplification factor (server calls per
// client call), and series over time of the load at the server, successes,
// refusals, failures and the watched breaker's state. [WriteSVG] draws
// them, one panel per policy set; [WriteTable] prints the totals.
package sim
