// Package breaker is a circuit breaker: a guard, shared by every call to one
// dependency, that stops calls while the dependency fails.
//
// A [Breaker] is closed (admitting calls) until a trip rule holds, open
// (refusing calls with [ErrOpen]) for a cooldown, then half-open: it admits
// a few trial calls, refuses the rest with [ErrTooManyTrials], and closes
// when enough trials succeed in a row. It opens again on a trial that
// fails, that is slow (when Config.SlowCall is set), or that expires
// without reporting (after Config.TrialTimeout). Trip rules: consecutive
// failures; failure ratio or slow-call ratio over a sliding window
// (count-based or time-based), once it holds a minimum number of calls; a
// custom rule on [Counts]. The rules are checked when a failure or a slow
// call is counted, not on successes. The cooldown is fixed or grows along a
// backoff schedule. See [Config].
//
// One Breaker guards one dependency whatever the result types of its
// calls: it is untyped, and [Policy] makes it a resilience.Policy[T] for
// any T. Callers that cannot wrap the call in a function (a transport, a
// stream) use the two-step [Breaker.Allow] and [Permit] instead.
//
// While closed, admitting a call and counting its success allocate nothing
// and take no lock, except that with a time-based window a success is
// counted under a lock of the caller's counter shard (one of many once the
// breaker has grown them, not a lock all calls share). A breaker at rest
// holds about 470 bytes whatever GOMAXPROCS is, and grows its counter
// shards only when its callers are measured to collide (see [Breaker]). An
// open breaker on the real clock refuses without reading the clock.
//
// # Entry points
//
//   - [New] with options ([WithThreshold], [WithFailureRatio],
//     [WithWindowCalls], [WithWindowDuration], [WithSlowCallRatio],
//     [WithTripIf], [WithCooldown], [WithCooldownBackoff], ...) or
//     [WithConfig] and a [Config] (whose zero fields are the defaults;
//     JSON through [Config.MarshalJSON] and [Config.UnmarshalJSON]),
//     checked by [Config.Validate]
//   - [Policy]: the breaker as a layer of a resilience.Policy[T]
//   - [Breaker.Allow], [Permit.Done], [Permit.Report]: the two-step form
//   - [Breaker.Record]: an outcome observed without a permit
//   - [Breaker.ForceOpen], [Breaker.ForceClosed], [Breaker.Reset]: manual control
//   - [Breaker.State], [Breaker.Counts], [Breaker.Name], and
//     Config.OnStateChange with a [Transition]: observation
//   - [Breaker.Stats] (a consistent [Stats]: state, generation, counts,
//     refusals, how long it has been open and the cooldown left) and [Breaker.Snapshot] (the same as a telemetry.Snapshot,
//     for a telemetry.Registry); [WithObserver]: the breaker's events
//     (transitions, refusals, failures, ignored outcomes) for a
//     telemetry.Observer; [Kind] and the event types [EventOpened],
//     [EventHalfOpened], [EventClosed], [EventRefused], [EventFailure],
//     [EventIgnored], [EventEvicted]
//   - [Keyed], [NewKeyed], [KeyedPolicy], [WithMaxKeys]: one breaker per
//     key (a host, a tenant), at most MaxKeys of them, closed ones
//     forgotten first; [Keyed.Breaker], [Keyed.All], [Keyed.Stats]
//     ([KeyedStats]), [Keyed.Len]; [Keyed.Name] and [Keyed.Snapshot] (the
//     keys, the open ones and the five with the most refusals) make it a
//     telemetry.Guard
//   - [DefaultClassify], [Outcome]: which errors are failures
//   - [ErrOpen], [ErrForcedOpen], [ErrTooManyTrials]: refusals (*resilience.RefusedError)
//
// Options: [WithName], [WithThreshold], [WithFailureRatio],
// [WithSlowCallRatio], [WithSlowCall], [WithTripIf], [WithWindowCalls],
// [WithWindowDuration], [WithWindowBuckets], [WithMinCalls],
// [WithCooldown], [WithCooldownBackoff], [WithTrialTimeout], [WithMaxTrials],
// [WithSuccessThreshold], [WithClassify], [WithOnStateChange],
// [WithObserver], [WithClock], [WithMaxKeys] (a Keyed's), [WithConfig]; all
// of type [Option].
//
// # Settings
//
// Each option sets the [Config] field of its name. A zero field means the
// default below, so Config{} is the breaker of New(); only Threshold takes
// resilience.Off.
//
//   - Threshold: consecutive failures that trip; they never decay with
//     time. Default 5 when no other trip rule is set, else no
//     consecutive-failures rule; resilience.Off drops the rule.
//   - FailureRatio, SlowCallRatio: the ratio of failures, or of slow calls,
//     over the window that trips, in [0, 1]. Default off.
//   - WindowCalls: a count-based sliding window of the ratio rules (and of
//     Counts while closed). Default the last 100 calls when a ratio rule is
//     set and WindowDuration is not, else none.
//   - WindowDuration, WindowBuckets: a time-based sliding window instead,
//     in buckets. Default none, 10 buckets. Exclusive with WindowCalls: the
//     later one set wins.
//   - MinCalls: calls in the window before a ratio rule applies. Default 10
//     (or WindowCalls if smaller).
//   - SlowCall: the duration above which a call is slow, successful or not.
//     Default none: no call is slow.
//   - TripIf: a custom rule on [Counts]. Default off.
//   - Cooldown: time open before half-open. Default 30s.
//   - CooldownBackoff: a growing cooldown (a backoff.Schedule), capped, its
//     k-th delay for the k-th opening in a row, reset when the breaker
//     closes. Default not set: the fixed Cooldown. Exclusive with Cooldown:
//     the later one set wins.
//   - TrialTimeout: a trial that has not reported this long after its
//     admission expires, and the breaker opens again (set it above the
//     slowest call). Default Cooldown, or CooldownBackoff's Max.
//   - MaxTrials, SuccessThreshold: half-open trials at once, and successful
//     trials in a row that close. Default 1 and 1.
//   - Classify: which errors are failures. Default [DefaultClassify]: every
//     error but context.Canceled and resilience.ErrRefused.
//   - MaxKeys: the breakers a [Keyed] holds. Default 8192.
//   - Name, OnStateChange, Observer, Clock: the name in errors, events and
//     the layer's name; a transition callback; an observer of events;
//     clock.Real().
//
// The Config reads and writes JSON, for example
//
//	{"Name":"search","Threshold":-1,"FailureRatio":0.5,"WindowDuration":"1m0s",
//	 "CooldownBackoff":{"Kind":"exponential","Base":"10s","Multiplier":2,"Max":"2m0s"}}
//
// TripIf, Classify, OnStateChange, Observer and Clock are not serialised:
// give them as options.
//
// # Observation
//
// With an observer set (WithObserver), the breaker reports each
// transition (breaker.opened, breaker.half_opened, breaker.closed), each
// refusal (breaker.refused), each failure it counts (breaker.failure) and
// each outcome it ignores (breaker.ignored); the Event constants
// ([EventOpened], ...) list the fields of each. Successes are counted, not reported: the closed path of
// a call that succeeds is the same with and without an observer, and
// costs nothing more. A refusal costs one call of the observer. Without
// an observer, nothing is built or called.
//
// # Generations
//
// Every transition, and every ForceOpen, ForceClosed or Reset, starts a new
// generation: counts start from zero, and a permit issued in an older
// generation reports nothing. [State] values are [Closed], [Open] and
// [HalfOpen].
package breaker
