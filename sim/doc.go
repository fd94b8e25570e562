// Package sim is a deterministic discrete-event simulator of a fleet of
// clients calling a server through real pipelines of this library, in
// virtual time, so that a user compares pipelines under load spikes and
// outages by numbers and by looking, in milliseconds of wall-clock time.
//
// The pipelines are the real policies — retry, breaker, timeout (with
// WithAbandon too), hedge, bulkhead (with its queue too), rate limiter,
// adaptive limiter, throttle, chaos, fallback — not models of them: a
// [PolicySet] builds its pipeline on the run's clock ([Env.Clock]), a
// clock.Clock in virtual time, on which the policies wait as they would on
// the real clock. The [Server] is a model: latency Base + Slope × calls in
// progress, a long tail (Slow), a Capacity, a pool of Workers that calls
// wait for in turn (resized at scripted times), scripted [Outage]s. [Clients]
// are closed loops: each calls, waits for the answer, pauses, calls again.
//
//	res := sim.Run(scenario, sim.PolicySet[int]{Name: "retry", Build: func(env *sim.Env) resilience.Policy[int] {
//		return retry.New[int](retry.WithClock(env.Clock()),
//			retry.WithBackoff(backoff.Exponential(10*time.Millisecond, 2, time.Second).
//				WithJitter(backoff.Full).WithRand(env.Rand())))
//	}})
//	fmt.Println(res.Amplification(), res.Latency(0.99))
//
// # Determinism
//
// Every simulated call runs on a goroutine of its own, but only one
// goroutine of the run runs at a time: the scheduler hands a baton to one
// call, which runs until it waits on the run's clock (Sleep) or ends, and
// hands it back; then the scheduler takes the next event from its queue, in
// order of virtual time (events of the same time in the order they were
// queued): a call to wake, or a callback to run (an AfterFunc, such as a
// timeout's, runs on the scheduler, between calls). Random draws come from
// sources seeded by [Scenario.Seed]. So the same scenario, policy set and
// seed give the same [Result], on any machine, under any GOMAXPROCS.
//
// Policies that start goroutines or wait on one another — a hedge's
// attempts, a timeout WithAbandon's op, a bulkhead's or an adaptive
// limiter's queue — are run the same way. A goroutine that the pipeline
// starts and that calls the clock or the server becomes a simulated call
// of its own, which waits for the baton. A call that blocks on something
// other than the clock (a channel, a select on a timer of the clock's
// NewTimer) gives the baton up; when it is woken, it asks for it again.
// Before each event, the scheduler waits until every goroutine of the run
// is blocked — it reads their states from runtime.Stack, which stops the
// world — and queues the calls that asked for the baton meanwhile in the
// order they were created: goroutines of the pipeline that ask for the
// first time, after the others, in the order of the calls that started
// them and then of their goroutine ids, which Go gives in increasing order
// to the goroutines started in a row from one processor (a call that
// moves to another processor between two starts may number them out of
// order, rarely). While a pipeline has no goroutine of its own
// and no call waits on anything but the clock, the count of goroutines
// created (runtime/metrics) shows that none was started, and the stacks
// are not read.
//
// # Limits
//
// A pipeline whose calls wait on each other costs far more than one that
// waits only on the clock: while a call waits on something other than the
// clock, each event reads the stacks of all goroutines, tens to hundreds
// of microseconds. With 20 clients: a hedge that fires on 5% of the calls,
// about 50µs per client call (BenchmarkSimulateHedge); a timeout
// WithAbandon or a bulkhead queue, on which every call waits, 1 to 2ms;
// retry, breaker and timeout, about 5µs (BenchmarkSimulate10k). Goroutines of
// the pipeline that one event wakes together (a caller and the attempt
// that woke it) run at the same time until they wait again, and so do
// their changes to state outside the simulator: the policies guard theirs
// with locks, and a layer of your own must too, as it would outside the
// simulator (a call that blocks on a channel gives no synchronization to
// the next). A layer may hold a lock across next.Call: a call waiting for
// it is blocked, as on a channel. A layer must wait on [Env.Clock], never
// on the real clock (time.After, time.NewTimer, a context's deadline): to
// the scheduler a call waiting on a real timer is blocked like one waiting
// on a channel, so virtual time goes on without it, runs differ, and a
// call woken by the real clock while the scheduler does not wait for it
// makes Run panic (a wall-clock pause that ends by itself, such as a
// time.Sleep standing for work, is waited for). A jittered backoff
// schedule must draw from [Env.Rand] (WithRand): the default source would
// make runs differ. A call blocked on something that nothing in the run
// will wake makes [Run] panic once every other call is done and the run's
// Duration is over (the end of the run, which ends every call's context,
// may have woken it).
//
// # Output
//
// A [Result] has totals, the amplification factor (server calls per
// client call), the latency of each client call ([Result.Latency] gives
// its quantiles), and series over time of the load at the server,
// successes, refusals, failures and the watched breaker's state.
// [WriteSVG] draws them, one panel per policy set; [WriteTable] prints the
// totals.
package sim
