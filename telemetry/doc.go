// Package telemetry is how the policies say what they do: one event model
// for all of them, observers that receive the events (a [Counter] for
// exporters, a [Slog] for logs), a uniform [Snapshot] of a guard's live
// state, and a [Registry] of guards and pipelines for exporters and health
// checks to enumerate. It depends on the standard library and package
// clock only, so the root package and every policy can import it (and it
// must never import them).
//
// A policy reports to the [Observer] given to it (breaker.WithObserver,
// retry.WithObserver, timeout.WithObserver, hedge.WithObserver,
// bulkhead.WithObserver, ratelimit.WithObserver, adaptive.WithObserver,
// throttle.WithObserver, chaos.WithObserver, cache.WithObserver,
// resilience.WithFallbackObserver; resilienceredis's WithObserver for its
// fleet-wide guards, RetryBudgetConfig.Observer for its retry budget and
// WithCacheObserver for its cache Store). With none, reporting costs nothing:
// the policies check for a nil Observer and build no event. Events are
// small values ([Event]) built and passed without allocation. Successes are counted,
// not streamed: a call that succeeds on a closed breaker emits no event
// (its count is in the breaker's Stats). The one exception is the
// durations: with an observer, a retry policy reports every attempt's
// duration (retry.attempt) and every call's (retry.call), successes
// included.
//
// # One observer for every consumer
//
// A [Registry] is an Observer that passes each event to the consumers
// added to it ([Registry.AddObserver]); the exporters (resilienceprom's
// Collector and resilienceotel's Metrics, given the registry with their
// WithRegistry options), the dashboard (dashboard.New) and the health
// check (resiliencehttp.Health) add themselves.
// So the policies of a pipeline need one observer, the registry, to feed
// all of them, and the latency comes with no layer of its own:
//
//	reg := telemetry.NewRegistry()
//	collector, err := resilienceprom.New(prometheus.DefaultRegisterer, resilienceprom.WithRegistry(reg))
//	dash := dashboard.New(reg, nil)
//	b := breaker.New(breaker.WithName("prices"), breaker.WithObserver(reg))
//	p := resilience.Then(
//		retry.New[*http.Response](retry.WithName("prices"), retry.WithObserver(reg)),
//		breaker.Policy[*http.Response](b),
//		timeout.New[*http.Response](time.Second),
//	)
//	_ = reg.Register(b)
//	_ = reg.RegisterPipeline("prices", p) // its chain: retry(prices) > breaker(prices) > timeout(1s)
//
// The retry's events retry.call and retry.attempt carry the durations of
// the calls and their attempts: the exporters record them in their call
// and attempt duration histograms under the retry's name, the dashboard
// the attempts in the tile of that name (its calls per second, error %
// and latency percentiles). Name the retry as the guard it retries. With
// no observer, the policies build no event and read no clock for them.
// The Measure layers of the exporters and of the dashboard still time a
// part of a chain that has no retry (or in place of one's events);
// events and Measure layers of one name add up, so use one or the other
// for a name.
//
// # Entry points
//
//   - [Event], [Type], [Kind]: what happened, and in which policy;
//     [WhatCall], [WhatAttempt]: the events that carry durations
//   - [Observer], [ObserverFunc], [Multi]: who receives events;
//     [Registry.Observe], [Registry.AddObserver]: one observer that
//     passes events to every consumer added to it
//   - [Counter]: counts per policy and event type, for exporters
//   - [CheckName]: the check of a name given to a policy (valid UTF-8)
//   - [Slog], [NewSlog], [SlogOptions], [Level]: events as log lines
//   - [Guard], [Snapshot], [Value], [ValueType], [KeySummary], [KeyStat],
//     [AddTop]: a guard's live state, described by the guard: its kind,
//     name, state, refusals and named values (unit, type, help), so that
//     exporters, dashboards and health checks render any guard, one of
//     your own included, without knowing its kind
//   - [Registry], [NewRegistry], [ErrDuplicate], [ErrNoName],
//     [ErrInvalidName]: guards and pipelines by name;
//     [Registry.OpenBreakers] answers "which breakers are open now?"
//
// # Events
//
// Every event's Type is "kind.what"; the kind is the policy's
// ([Type.Kind]). Each package owns its kind and its event types, as
// constants whose doc comments list the fields each sets: breaker.Kind
// and breaker.EventOpened ("breaker.opened"), retry.EventGaveUp,
// timeout.EventExpired, hedge.EventLaunched, bulkhead.EventRefused,
// ratelimit.EventWaited, the fallback's resilience.EventFallbackUsed,
// ...; this package names none, and its consumers ([Level], the
// exporters, the dashboard) read the part after the dot ([Type.What]). Event.Name is the policy's name (its Config.Name) in
// every event; Event.Key is the key in every event of a breaker.Keyed's
// breakers, and empty in the events of a ratelimit.Keyed's limiters
// (saying the key would allocate; they carry the Keyed's Name). The other
// fields are set as the table of the built-in policies' events says and
// are zero otherwise. The Polly column is the Polly v8 event a dashboard
// built on Polly's telemetry maps to the same row ("—": Polly has none); the level
// is the one a [Slog] writes at.
//
//	Type                      emitted when                       fields                          Polly                   level
//	breaker.opened            the breaker opened: a trip rule    From, To ("open"), Wait (the    OnCircuitOpened         Warn
//	                          held, a half-open trial failed,    cooldown; "never" when forced)
//	                          was slow or expired, ForceOpen
//	breaker.half_opened       the cooldown ended                 From, To ("half-open")          OnCircuitHalfOpened     Info
//	breaker.closed            trials succeeded, ForceClosed,     From, To ("closed")             OnCircuitClosed         Info
//	                          Reset
//	breaker.refused           a call was refused (open, forced   Err (the *RefusedError), Wait   — (BrokenCircuit-       Debug
//	                          open, too many trials)             (its Retry-After hint)          Exception)
//	breaker.failure           a failure was counted (closed, or  Err (nil from Report, Record)   —                       Debug
//	                          a half-open trial)
//	breaker.ignored           an outcome was ignored (Classify   Err                             —                       Debug
//	                          said so, the caller canceled)
//	breaker.evicted           a breaker.Keyed forgot a key whose Key, From (its state: "open",     —                       Warn
//	                          breaker was not closed, to make    "half-open", or "closed" when
//	                          room for a new key                 forced closed)
//	retry.attempt_failed      an attempt failed                  Attempt, Err                    ExecutionAttempt        Debug
//	                                                                                             (Handled)
//	retry.waiting             a wait before the next attempt     Attempt (the one that failed),  OnRetry                 Debug
//	                          starts                             Err (its error), Wait
//	retry.gave_up             the policy stops with a            Attempt (attempts made), Err    —                       Warn
//	                          retry.Error                        (the Error's Reason)
//	retry.attempt             an attempt returned (successes     Attempt, Elapsed (its           ExecutionAttempt        Debug
//	                          included)                          duration), Err (nil: success)
//	retry.call                a call that made an attempt        Elapsed (attempts and waits),   —                       Debug
//	                          returned (successes included)      Err (nil: success)
//	timeout.expired           a call returned ErrTimeout: its    Elapsed (the timeout)           OnTimeout               Debug
//	                          deadline passed
//	timeout.abandoned         the policy returned without an op  Elapsed (the timeout)           —                       Info
//	                          that ignored its deadline (at the
//	                          deadline, after timeout.expired,
//	                          or at the caller's cancellation)
//	hedge.launched            a hedged copy started              Attempt (2 = the first hedge),  OnHedging               Debug
//	                                                             Elapsed (since the first copy)
//	hedge.won                 a copy's result was used           Attempt (that copy), Elapsed    —                       Debug
//	                          (in a call that hedged)            (since the first copy)
//	hedge.losers_cancelled    the other copies were cancelled    Attempt (how many)              —                       Debug
//	bulkhead.queued_admitted  a queued call got a slot           Wait (time in the queue)        —                       Debug
//	bulkhead.refused          a call was refused (full, queue    Err, Wait (time in the queue)   OnRateLimiterRejected   Debug
//	                          timeout)
//	ratelimit.refused         a call was refused                 Err, Wait (its Retry-After),    OnRateLimiterRejected   Debug
//	                                                             Key (keyed limiters)
//	ratelimit.waited          a call waited for a token          Wait, Key (keyed limiters)      —                       Debug
//	fallback.used             the fallback replaced an error     Err (the error it replaced)     OnFallback              Info
//
// The other packages' events: package adaptive's limiter emits
// adaptive.refused (adaptive.EventRefused: Err, the refusal) and package
// throttle's throttler throttle.refused (throttle.EventRefused), which the
// exporters count as a call refused and a [Slog] writes at Debug, as every
// "kind.refused" type (and every "kind.failure" and "kind.answered"). So
// do package chaos's injector (chaos.fault, chaos.latency, chaos.result,
// chaos.injected: one per injection), resiliencehttp's Middleware and
// resiliencegrpc's server side (http_server.* and grpc_server.*:
// answered, failure, refused, one per request), package cache's caches
// (cache.hit, cache.miss, cache.coalesced: Debug, one per call;
// cache.stale, cache.refresh_failed: Info; cache.evicted: Warn), and resilienceredis's
// fleet-wide guards (ratelimit.local, breaker.local, breaker.fenced), its
// retry budget (retry.budget_local: a retry decided by the local budget
// while Redis is away) and its cache Store (cache.store_failed: a round
// trip that failed); the exporters count those as events only. Every policy in the table emits its events. A keyed rate limiter's events
// leave Key empty: naming the key would cost an allocation per event, so
// they count under the limiter's Name.
//
// Events of one call come in the order they happened. A breaker's
// transitions and counted failures come in order, one at a time, from
// whichever goroutine delivers them (as its OnStateChange callbacks do),
// never with its lock held; refusals and ignored outcomes come directly
// from the calling goroutines, so they may interleave with them.
//
// # Logging
//
// [NewSlog] writes events to a *slog.Logger: the message is the Type, the
// attributes have the stable keys AttrPolicy, AttrName, ... (policy, name,
// key, attempt, error, wait, elapsed, from, to, suppressed), left out when
// zero. Per-call events (all but transitions) are rate-limited, at most
// one line per second per policy name and event type by default, so an
// outage writes a line a second, with the count of the lines left out
// (suppressed), not one per call. See the example of [NewSlog].
package telemetry
