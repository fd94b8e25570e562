// Package adaptive is an adaptive concurrency limit: a guard that finds
// for itself how many calls a dependency can take at once, from the
// latency and the outcome of the calls, and sheds the rest. A static
// limit (a bulkhead's) is wrong the day the traffic or the dependency
// changes; this one moves between a min and a max as the dependency's
// capacity does.
//
//	lim := adaptive.New(adaptive.WithName("search"))
//	p := adaptive.Policy[*Result](lim)
//	res, err := p.Do(ctx, func(ctx context.Context) (*Result, error) { return search(ctx, q) })
//
// A [Limiter] is a guard shared per dependency, like a bulkhead, whatever
// the result types of the calls. On a client it keeps a slow dependency
// from being buried under calls; on a server (resiliencehttp.Middleware,
// a gRPC interceptor) it sheds the requests the server cannot serve
// without queueing them, so the ones it serves keep their latency.
//
// # How the limit moves
//
// The limiter measures each call from admission to [Permit.Done] (a
// sample of them, when they come fast). Over a sampling window (100ms,
// and at least 10 calls, by default) it takes the mean latency of the
// successful calls and counts the failures; it keeps a baseline, the
// lowest window latency of the last ten minutes: the dependency's latency
// without queueing (a run of windows far below the baseline lowers it by
// about 5% only, until the run has lasted 2s; and a window offers it no
// less than the windows' latency averaged over about a second, so that
// the noise of short windows does not make it too low). At the end of
// each window its [Algorithm] sets the next limit from these.
// [Gradient2], the default, grows the limit by 0.2·√limit (one call at
// least) a window while latency stays within 1.1 times the baseline and
// cuts it in proportion as latency rises above, by half at once at twice
// that; [Vegas] estimates the calls queued at the
// dependency, limit × (1 − baseline / latency), keeps them between alpha
// and 2·alpha (alpha = min(3·log10(limit), limit/15), at least 1), and
// drops the excess at once; [AIMD] adds one per healthy window and cuts
// by 0.9 on congestion, or to the tolerance at once when latency is
// further above it. Failures count as congestion in all three. Calls
// that say nothing about the dependency are not counted at all, and
// neither lower nor raise the limit: those whose caller gave up
// (context.Canceled, or any failure after the context given to
// [Limiter.Acquire] ended, its deadline included) and those an inner
// guard refused (resilience.ErrRefused); see [Permit.Done].
//
// In the simulator (package sim), a dependency with 8 workers of about
// 6ms, driven at 3 times its capacity, a third of its capacity before,
// then given 16 workers and 8 again (TestOverloadGoals): each algorithm
// brings the limit within 25% of 8 within 0.2s of the overload and keeps
// it there (in the upper half of that band: the limit settles where the
// latency is about 1.1 times the baseline), the p99 latency of the
// admitted calls is 1.18 to 1.26 times the p99 without overload, and the
// limit follows 16 workers within 0.3s and 8 again within 0.2s. Gradient2 stays the default: it meets these
// as AIMD and Vegas do, and its step, a share of √limit up and of the
// limit down, scales with the limit, where AIMD climbs by one per window
// whatever the limit. The figures against failsafe-go's adaptivelimiter,
// on the real clock, are in the bench folder's README.
//
// Guardrails, whatever the algorithm (each answers a failure that users
// of other limiters reported):
//   - the baseline is a minimum over a bounded memory, never an average,
//     so an incident shorter than [Config.BaselineMemory] cannot drift it
//     up and make its own latency look normal (failsafe-go issue 127);
//     [Config.MaxLatency] bounds it for good and cuts the limit whenever
//     a window is slower;
//   - a run of windows can lower the baseline by about 5% at most (to
//     baseline/1.05), until it has lasted three windows and 2s (2 ×
//     max(Window, 1s)): a burst of calls answered at once (from a cache,
//     within the clock's resolution) would otherwise become the baseline,
//     against which every normal window reads as queueing, and hold the
//     limit at Min for BaselineMemory; a dependency that is faster for
//     good is followed after 2s. (Gradient2Limit's long-term RTT is an
//     average over 600 samples, which one window barely moves, but which
//     drifts up in a long incident: the item above.)
//   - Gradient2 adds its headroom only while it sees no queueing, so it
//     cannot climb without end while the gradient sits near 0.8
//     (Netflix/concurrency-limits PR 134);
//   - failures and refusals end windows too, so the limit keeps moving
//     when every call fails or is refused (platinummonkey/
//     go-concurrency-limits issue 141), and a window in which no call
//     finishes while calls are in flight halves the limit;
//   - the limit never grows out of a window whose calls used less than
//     half of it;
//   - a window ends after 10 × Window (at least 10s) whatever it saw, so
//     a dependency called rarely still moves the limit, and one whose
//     calls take seconds is not read as stalled.
//
// # Entry points
//
//   - [New] creates a Limiter; [Option]s configure it: [WithAlgorithm],
//     [WithMinLimit], [WithMaxLimit], [WithInitial], [WithWindowDuration],
//     [WithWindowCalls], [WithMaxLatency],
//     [WithBaselineMemory], [WithMaxQueue], [WithMaxWait], [WithReserve],
//     [WithName], [WithClock]. A [Config] read at run time (it reads and
//     writes JSON) is checked with [Config.Validate] and given with
//     [WithConfig], which sets its non-zero fields only.
//   - [Limiter.Acquire] admits a call and returns its [Permit], which
//     [Permit.Done] ends with the call's error: for code that calls the
//     dependency itself, and for integrations.
//   - [Policy] makes a Limiter a layer of a resilience.Policy[T].
//   - [ContextWithPriority] marks a call [Critical] or [Low]: with a
//     reserve ([WithReserve]) critical calls are shed last, and in the
//     queue they go first.
//   - [Limiter.Stats] reports the limit, the calls in flight and queued,
//     the refusals, the latency and the baseline, for metrics;
//     [Limiter.Name] and [Limiter.Snapshot] (kind [Kind]) make the limiter
//     a telemetry.Guard, for a telemetry.Registry, the dashboard, the
//     exporters and resiliencehttp.Health.
//   - [Gradient2], [Vegas], [AIMD]: the [Algorithm]s, values whose zero
//     fields mean their defaults.
//
// # Defaults
//
//	option, field                   default                          unit
//	WithAlgorithm, Algorithm        Gradient2{}
//	WithMinLimit, Min               1                                calls in flight
//	WithMaxLimit, Max               1000 (or Min, if larger)         calls in flight
//	WithInitial, Initial            20 (within Min and Max)          calls in flight
//	WithWindowDuration, Window      100ms                            time.Duration
//	WithWindowCalls, MinSamples     10                               calls
//	WithMaxLatency, MaxLatency      none                             time.Duration
//	WithBaselineMemory, ...Memory   10m (resilience.Off: for ever)   time.Duration
//	WithMaxQueue, MaxQueue          0: no queue                      callers
//	WithMaxWait, MaxWait            0: no limit but the context      time.Duration
//	WithReserve, Reserve            0: no reserve                    share of the limit
//	WithName, Name                  unnamed
//	WithClock, Clock                clock.Real()
//
// # Errors
//
// A refusal is a *resilience.RefusedError carrying the limiter's name and
// no Retry-After hint; it matches [ErrFull] (or [ErrQueueTimeout], which
// matches ErrFull) and resilience.ErrRefused through errors.Is. A caller
// whose context has ended gets ctx.Err(). Invalid configuration panics in
// New with a message naming the field and the value; [Config.Validate]
// returns the same message as an error.
//
// # Cost
//
// Admitting and ending a call while nobody is queued is lock-free and
// allocates nothing: a compare-and-swap each way on one word, a few
// atomic adds to the window's counters, and two readings of the
// monotonic clock (most of the cost). When calls come fast (more than 256
// in a window) only a sample of them is timed: all of a window's first
// 256, then one in k, about 512 a window; the others read no clock. A
// refusal allocates nothing. A
// caller that queues allocates its place in the line, and a timer with
// MaxWait. The end of a window takes a lock, once per window.
package adaptive
