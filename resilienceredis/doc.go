// Package resilienceredis shares a rate limit, a circuit breaker, a retry
// budget and a cache store across a fleet of instances, on Redis: ten
// replicas of a service then keep one limit, not ten, trip one breaker on
// the fleet's failures, not each on its own, retry within one budget, and
// read the entries the others cached.
//
// # Entry points
//
//   - [NewLimiter]: a token bucket shared by the fleet, with the contract of
//     policy/ratelimit's Limiter ([Limiter.Allow], [Limiter.AllowN],
//     [Limiter.Wait], [Limiter.WaitN]) and [Limiter.AllowAtMost] (up to
//     n tokens, as many as the bucket holds, in one script);
//     [NewKeyedLimiter]: one per key (per tenant); [LimiterPolicy] and [WaitPolicy]: as a layer of a
//     resilience.Policy[T].
//   - [NewBreaker]: a circuit breaker whose state the fleet shares, with
//     [Breaker.Allow] and [Permit] as policy/breaker has them, and
//     [BreakerPolicy]: as a layer of a resilience.Policy[T].
//   - [NewRetryBudget]: a retry budget kept by the fleet, a
//     retry.Budgeter for retry.WithBudget: the fleet's retries are at most
//     [RetryBudgetConfig.Ratio] of its executions, with a floor per
//     instance; configured by options ([WithRatio], [WithMinPerSecond],
//     [WithWindow], ...) or a [RetryBudgetConfig].
//   - [NewCacheStore]: a policy/cache Store on Redis, so that the caches
//     of a fleet share their entries ([CacheStore], [Codec], [JSONCodec]).
//   - [LimiterConfig], [BreakerConfig], [RetryBudgetConfig]: the
//     configuration, with Validate and JSON; options ([WithTimeout],
//     [WithPrefix], [WithThreshold], ...) set single fields. Every
//     constructor takes its required values positionally (the client, the
//     name, a limiter's rate and burst) and checks them alike: a nil client
//     (or a nil *redis.Client), or a name that is empty, not valid UTF-8 or
//     holds '{' or '}', panics naming the constructor.
//
// The zero value of a [Limiter], [KeyedLimiter], [Breaker], [RetryBudget]
// or [CacheStore] is not usable: create each with its constructor. Every
// method of a zero value (and [LimiterPolicy], [WaitPolicy] or
// [BreakerPolicy] given one) panics on the caller's goroutine naming the
// constructor, e.g. "resilienceredis: CacheStore.Get on a zero
// CacheStore: create one with NewCacheStore", instead of admitting every
// call or failing on a nil pointer; only Close, which is safe to call at
// any time, does nothing and returns nil. The zero [Permit] reports
// nothing.
//
// Every guard has a Close that makes it decide locally for good, as while
// Redis is unreachable, and ask Redis nothing more: a [Limiter] or a
// [KeyedLimiter] its fallback, a [Breaker] its local breaker, a
// [RetryBudget] its local budget. Each then reports why with [ErrClosed]:
// in its local events (LimiterLocal per decision, one BreakerLocal at
// Close, RetryBudgetLocal per retry) and as its snapshot's Reason; the
// calls that only ask Redis (Limiter.Check, Breaker.Reset, Breaker.Shared)
// return ErrClosed. Close stops the guard's goroutines, waits for its
// round trips in flight, and does not close the client.
//
// The policies' layers are named as the local ones ("ratelimit(name)",
// "breaker(name)"), their refusals are *resilience.RefusedError values
// matching the local sentinels (ratelimit.ErrLimited, breaker.ErrOpen,
// breaker.ErrTooManyTrials) and resilience.ErrRefused, with a RetryAfter
// hint, and the breaker's transitions are breaker.Transition values given
// to BreakerConfig.OnStateChange: code written for the local guards works
// with these unchanged, except code that reads a Transition's Counts: a
// transition of the fleet's breaker (learnt from Redis) carries zero
// Counts, not the counts that tripped it (only the local breaker's, while
// Redis is unreachable, carry its counts); read the fleet's counts with
// [Breaker.Shared].
//
// # Across a fleet
//
// What is guaranteed, and where it stops. "The fleet" is every instance
// that builds a guard of the same name and Prefix (and, for a limiter, the
// same Rate and Burst; for a breaker, the same rules) on one Redis: a
// single primary, or a Redis Cluster (see "On a Redis Cluster"). Redis
// replicates asynchronously, so a failover may lose the last writes, a
// trip or spent tokens, as it loses any write.
// Times are the Redis server's (TIME, in the scripts): the instances'
// clocks play no part in the decisions.
//
// Rate limiter:
//
//   - While Redis answers, the fleet admits at most Burst + Rate·w events
//     in any interval of length w of the server's clock, as one
//     ratelimit.Limiter would in one process: each decision is one script
//     (GCRA, one round trip: EVALSHA, or EVAL once after NOSCRIPT), atomic
//     in Redis. The bucket is kept in microseconds (as a double: exact to
//     well under a microsecond for a century), so Rate is at most 1e6;
//     the scripts keep times within 2^52µs (about 142 years) of now, so
//     Rate is at least 1e6/2^52 and Burst/Rate at most 2^52µs.
//   - A decision waits on Redis at most Timeout (50ms by default). When
//     Redis fails or does not answer in time, the instance's fallback
//     decides (FallbackRate: by default a local bucket of Rate and Burst,
//     so N instances admit up to N times the limit; or fail open, or
//     closed), and so do the decisions of the next ProbeInterval (1s),
//     without asking Redis. The limit then holds per instance only; the
//     shared bucket does not count those decisions, and a decision whose
//     round trip timed out may still have taken its tokens in Redis (the
//     script ran after the caller stopped waiting).
//   - Size Timeout for the host, not only for Redis: on a loaded host (a
//     busy CPU, a garbage collection, a 2-core container) a round trip
//     that Redis answers at once may still take the client longer than
//     50ms, and the decision then goes local for ProbeInterval although
//     Redis is healthy. It shows as LimiterLocal (BreakerLocal) events and
//     a snapshot State "local" whose Reason (Err) is "resilienceredis:
//     Redis did not answer within the timeout". Take Timeout above the
//     round trip's tail latency as the instance measures it (its p99.9
//     under load, plus headroom): a few hundred milliseconds on a busy
//     host; a decision then waits at most that long when Redis stalls.
//   - Keys expire when their bucket is full again: an idle bucket costs
//     Redis nothing, whatever the number of tenants.
//
// Rate limiter, under each fault (events go to LimiterConfig.Observer;
// [Limiter.Check] asks Redis the same questions at start and returns the
// answers as errors):
//
//   - Redis down, slow, out of memory (noeviction), loading, read-only,
//     busy: the fallback decides as above; each of its decisions emits a
//     LimiterLocal event whose Err is the failed round trip's error.
//   - Redis refuses the limiter's commands (NOPERM: the user may not run
//     EVALSHA, EVAL or the scripts' GET, PTTL, SET, ZADD on the keys;
//     WRONGTYPE: a key of the limiter holds another type; no scripting):
//     errors matching [ErrUnusable]. The fallback decides, each decision
//     emits LimiterLocal with that error, Redis is asked again every
//     ProbeInterval, and Check returns it: the fleet bound does not hold
//     until the cause is mended, and it is never silent.
//   - Eviction: every bucket key carries a TTL (it expires when the bucket
//     is full again), so with maxmemory set, every maxmemory-policy but
//     noeviction (the allkeys-* ones and the volatile-* ones alike) may
//     evict buckets, and each eviction refills one: the fleet then admits
//     more than the bound, with no error anywhere. Only noeviction (or no
//     maxmemory) is safe. The limiter reads the policy (CONFIG GET, where
//     the user may) at the first decision Redis answers and every minute
//     after, in the background, and reports LimiterEvictionUnsafe (an
//     error matching [ErrEvictionPolicy]); Check returns it.
//   - A stored value the scripts cannot have written (not a number, NaN,
//     infinite, without a TTL or with one that does not match it, in the
//     past beyond its key's expiry, more than 142 years ahead): the
//     script sets the bucket empty (it refills in Burst/Rate) and the
//     decision goes on from there, emitting LimiterBucketRepaired. A
//     refusal's RetryAfter is never 0 and, for buckets only Allow uses,
//     at most Burst/Rate; a Wait's reservation extends it by the waits
//     queued ahead.
//   - Instances of one name and Prefix with different Rate or Burst (a
//     rolling change of the limit): each setting has a bucket of its own
//     (the settings are in the key), so each group of instances keeps its
//     own limit and the name admits at most the sum of the limits in use.
//     Sharing one bucket would hold every instance to whichever setting
//     spent it last. The limiter records its settings under the name at
//     its checks; one that finds others in use (recorded within 3
//     minutes) reports LimiterSettingsConflict ([ErrSettingsConflict]),
//     and Check returns it.
//   - A cancelled Wait gives back its own tokens only, in the background,
//     and only if no caller has reserved tokens behind them: never
//     another's. One cancelled while Redis reserves its tokens returns
//     when Redis answers (within Timeout), to give them back too.
//
// Breaker:
//
//   - The shared state (epoch, state, generation, trials out, counts over
//     a shared window) changes only in scripts, atomically. Outcomes are
//     added there, never written back from what an instance read, so no
//     update is lost (A reads, B fails and writes, A fails and writes: the
//     count is 2). Every transition starts a new generation, and an
//     instance's batch is applied only to the generation and epoch it was
//     counted in: a stale instance cannot write over a newer state.
//     Outcomes are dropped only when the state has moved to a newer
//     generation since their calls were admitted: an instance's first read
//     of the state drops none.
//   - The trip rules are policy/breaker's, over the fleet's outcomes:
//     Threshold counts consecutive failures in the order the instances'
//     batches reach Redis (a batch's run of failures counts whole); the
//     ratio rules see a time-based window of WindowDuration kept in Redis,
//     checked once per batch on the window after it.
//   - While closed, a call makes no Redis round trip and allocates
//     nothing: its outcome joins the instance's batch, sent within
//     FlushInterval (50ms) or at MaxBatch (100) outcomes. An instance that
//     sees Threshold consecutive failures of its own refuses its calls at
//     once (breaker.ErrOpen) and sends its batch; it holds its calls for
//     Cooldown whatever the fleet makes of the batch, unless the shared
//     state moves on first (the fleet's trip, a Reset), and then counts
//     afresh. A trip is pushed to every instance by pub/sub; a message
//     an instance missed while it was not subscribed (before its first
//     subscription, or while its connection was made again) is made good
//     by a read as soon as it is subscribed again, and any other loss by
//     a read within ProbeInterval. Between the call that trips the
//     breaker and the moment an instance learns it, that instance's calls
//     still go to the dependency: up to FlushInterval plus the
//     propagation time (about a millisecond on one host).
//   - Half-open trials are counted in Redis: MaxTrials at once across the
//     fleet, SuccessThreshold successes in a row to close; a trial that
//     does not report within TrialTimeout (its instance crashed) expires
//     and opens the breaker again. Only a call that would be a trial asks
//     Redis, for at most Timeout; a refusal of an open breaker is decided
//     locally, from the cooldown the server reported.
//   - When a round trip fails or takes longer than Timeout, the instance
//     decides alone with a local breaker.Breaker of the same rules, started
//     afresh (a cooldown learnt from Redis still holds until it ends), and
//     tries Redis every ProbeInterval. When Redis answers, the instance
//     takes the shared state as it finds it. Lost in that window: the
//     fleet does not count the instance's outcomes of the window nor the
//     batch that was being sent (though a server that was only stalled
//     runs the batches queued before the stall when it continues, and then
//     counts them, late); a trip of the local breaker stays local (the
//     fleet is not told); a trial report that failed leaves its trial to
//     expire.
//   - Redis refuses the breaker's commands (NOPERM: an ACL that denies
//     EVALSHA, EVAL or the scripts' commands on the key; WRONGTYPE: the
//     state's key holds another type; no scripting): the instance decides
//     alone as above, with an error matching [ErrUnusable] in its
//     BreakerLocal event and its snapshot's Reason (Shared and Reset
//     return it), and tries Redis every ProbeInterval: the fleet's rules
//     do not hold until the cause is mended.
//   - The state lost (FLUSHALL, DEL, an eviction, a restart without
//     persistence): the next script creates it again, closed, with a new
//     random epoch, and publishes it; the instances take it whatever
//     generation they knew, and a batch refused for its old epoch is sent
//     again for the new state at once: the fleet counts again within one
//     FlushInterval. The counts, an open state and the trials out are lost
//     with it. The trials out are kept in the state's own hash: they are
//     never lost without it, so MaxTrials holds.
//   - The state older (a restart from an older snapshot, a failover to a
//     replica that was behind): an instance takes the state its next round
//     trip finds, even an older generation, unless its view changed during
//     that round trip; batches counted for the lost generations are sent
//     again if the older state is closed.
//   - Instances of one breaker with different rules share its state, each
//     applying its own rules to what it sends, and each reports the
//     other's rules ([Breaker.RulesMismatch], [ErrRulesMismatch],
//     BreakerConfig.OnRulesMismatch): the states are not kept apart, so
//     that a rolling change of the rules does not split the fleet in two
//     breakers for its length.
//   - Not in the fleet form: a count-based window (WindowCalls), TripIf,
//     CooldownBackoff, ForceOpen and ForceClosed ([Breaker.Reset] is
//     there).
//
// Retry budget:
//
//   - Each instance counts its executions and the retries it grants,
//     and sends the counts every FlushInterval (50ms) in one script to one
//     hash, Prefix+"rb:{name}", a field per bucket of the window (10
//     buckets of Window/10 by the server's clock), expiring 2 × Window
//     after the last counts; the script answers with the fleet's totals.
//     A retry is decided from the last totals and the instance's counts
//     since: no retry and no execution waits on Redis.
//   - An instance spends only its share of the fleet's headroom (Ratio ×
//     executions − retries, in proportion to its executions in the
//     window), so that instances with the same stale view do not each
//     spend all of it. The floor (MinPerSecond × Window of an instance's
//     own retries) is a minimum, not an addition. While every flush is
//     answered, the fleet's retries over a window are at most Ratio × its
//     executions, or the floors where those are more, plus what stale
//     views let through: each flush grants an instance its share of the
//     headroom left as Redis sees it, which does not yet hold the retries
//     other instances have made and not flushed. With flushes on time
//     that is a share of one FlushInterval's retries; a flusher held up
//     (a loaded machine) lets more through: with two instances, up to
//     half as much again as the headroom.
//   - A flush that fails or takes longer than Timeout: the instance decides
//     with a local retry.Budget of the same settings, which counted its
//     executions and retries all along, emits RetryBudgetLocal for each
//     retry it decides so, and tries Redis again after ProbeInterval. The
//     counts of that spell are not sent to Redis; the counts of the flush
//     that failed are dropped.
//
// No call waits on Redis longer than Timeout, whatever the client's own
// timeouts: with a client built with ContextTimeoutEnabled (which bounds
// every wait of a command by the context's deadline) the round trip runs
// on the caller's goroutine, under a context with that deadline; with any
// other client, on a goroutine of its own that the caller stops waiting
// for. A round trip that outlives the bound ends when the client gives it
// up.
//
// # On a Redis Cluster
//
// Give the guards a *redis.ClusterClient (any redis.UniversalClient
// works). Every script of a guard uses one key: a limiter's bucket, or a
// breaker's single hash. So:
//
//   - Tenants spread: a KeyedLimiter's key is the whole hash tag of its
//     bucket (braces escaped), so tenants spread over the primaries by
//     slot, and no tenant name can put others' buckets in its slot.
//   - Resharding: while a guard's slot moves (IMPORTING/MIGRATING,
//     MIGRATE), each script finds its one key on the source or, following
//     ASK, on the target: never TRYAGAIN for keys moved in part. The
//     breaker stays on the shared state and no outcome is lost; the
//     limiter's bound holds (measured: no decision went local during a
//     move, every failure injected during it was counted, and the fleet
//     admitted no more than Burst + Rate·elapsed).
//   - Failover: after a round trip fails, a guard asks the client to
//     reload its view of the cluster (a client with ReloadState, as
//     *redis.ClusterClient has: at most once per ProbeInterval, in the
//     background; no decision waits for it), and probes Redis again about
//     100ms after it instead of a ProbeInterval later. Decisions are local
//     from the primary's failure to within about ProbeInterval of the
//     replica's promotion (measured with go-redis's default options and
//     cluster-node-timeout 1000ms: promotion 1.9-2.7s after SIGKILL, the
//     limiters local until 0.72-1.11s after it, the breakers shared again
//     0.06-0.86s after it). No decision waits longer than Timeout.
//   - A KeyedLimiter on a cluster client keeps its health per slot: a
//     primary that fails sends its tenants to the fallback, and the
//     tenants of the other primaries stay on their shared buckets
//     (measured: 96-98% of their decisions shared while a primary was
//     killed). Each slot of the failed primary costs one failed round
//     trip per ProbeInterval (at most Timeout, to the decision that
//     probes).
//   - Over-admission in a failover: while decisions are local each of N
//     instances admits up to its fallback's Burst + Rate·w, w the local
//     window (kill to about ProbeInterval after the promotion), and the
//     promoted replica may have missed the bucket's last writes (at most
//     Burst more). Measured with 3 instances, Rate 200, Burst 20: 1159 to
//     1435 admitted beyond the fleet bound over 4.1-4.8s, of a w of about
//     3.4s (N·(Burst + Rate·w) = 2100).
//   - A promoted replica that missed the breaker's last transitions holds
//     an older generation of the same epoch: the instances take it as the
//     state there is (measured: a trip the replica missed; the instances
//     went from that generation, open, back to the replica's, closed, and
//     counted on it). Trials out that the replica missed are lost with
//     the writes: a failover can admit up to MaxTrials more trials, and
//     each instance deciding alone meanwhile admits what its local
//     breaker does (started closed: calls until Threshold failures, then
//     MaxTrials per Cooldown). Measured with a trial out (MaxTrials 1,
//     TrialTimeout an hour), 3 instances, Threshold 1, Cooldown 300ms, all
//     calls failing: 17-21 calls admitted by the local breakers over the
//     2.9-3.6s from the kill to a second after the promotion, and 0-3 trials
//     by the promoted state in that second, any first one of them beside
//     the trial it lost.
//
// [Breaker.Shared] reads the shared state as Redis holds it: epoch,
// generation, state, consecutive failures, the window's counts, trials.
//
// # Telemetry
//
// [Limiter], [KeyedLimiter], [Breaker] and [RetryBudget] are telemetry.Guards (Name and
// Snapshot), for a telemetry.Registry, the exporters, the dashboard and
// resiliencehttp.Health. A limiter's snapshot (kind "ratelimit") says
// where its decisions are made now, State [StateShared] or [StateLocal]
// (with the Reason: the error of the round trip that failed last), and
// counts the decisions of each; a breaker's (kind "breaker") has its state
// ("closed", "open", "half-open": while the instance decides alone, the
// local breaker's, never "local"), whether the instance decides alone
// (value local, and the Reason), and
// the outcomes sent, refused by the generation fence, and dropped; a
// retry budget's (kind "retry") says where its retries are decided, its
// share of the fleet's headroom, and counts executions, retries granted
// and flushes.
// [WithObserver] gives a limiter's events (LimiterLocal, one per decision
// its fallback makes, and the checks' warnings) and a breaker's
// ([BreakerLocal] each time it starts deciding alone, [BreakerFenced] for
// each batch the fence refused) to a telemetry.Observer.
//
// # Keys
//
// A limiter's bucket is Prefix+"rl:{name}:rate/burst" (a KeyedLimiter's,
// Prefix+"rl:name:rate/burst:{key}", with the key's "{", "}" and "\"
// escaped as \[, \] and \\, so that a key's braces never steer its slot),
// and the settings in use under its
// name a sorted set, Prefix+"rl:{name}:settings" (Prefix+"rl:name:settings");
// a breaker's state is one hash, Prefix+"br:{name}" (the state, the
// trials out, the shared window's buckets and the instances' rules), and
// its channel Prefix+"br:{name}"; a [CacheStore]'s entries are
// Prefix+"cache:{name}:generation:key" and its generation
// Prefix+"cache:{name}:gen"; a [RetryBudget]'s counts are the hash
// Prefix+"rb:{name}". Every script of a limiter, a breaker or a retry
// budget uses one key, so a Redis Cluster that moves the key's slot
// (resharding) answers it on one node or the other (following ASK), never
// with TRYAGAIN for keys in part moved. Prefix is "resilience:" by default.
package resilienceredis
