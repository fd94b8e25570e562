// Package ratelimit bounds how often a dependency is called, so that a
// caller never sends it more than it agreed to take: a token bucket shared
// by every call to the dependency, whatever the calls' result types.
//
// A bucket holds up to Burst tokens and refills at Rate tokens per second
// (events per second); a new bucket is full. Each event takes a token: in
// any interval of length w, at most Burst + Rate·w events pass, and an
// event is refused only when letting it pass would break that bound.
//
// # Entry points
//
//   - [New] creates a [Limiter]; [Every] gives a rate as one event per
//     duration. [Option]s ([WithMaxWait], [WithName], [WithObserver], [WithClock])
//     configure it. A [Config] read at run time (it reads and writes JSON)
//     is checked with [Config.Validate] and given with [WithConfig], which
//     sets its non-zero fields only: a zero field means the default, and
//     a zero Rate or Burst the one given to New. Rate resilience.Off
//     switches the refill off.
//   - [Limiter.Allow] and [Limiter.AllowN] decide at once;
//     [Limiter.Wait] and [Limiter.WaitN] wait for tokens when the wait fits
//     the deadline; [Limiter.Reserve] and [Limiter.ReserveN] take tokens
//     ahead and return a [Reservation] that says when to act
//     ([Reservation.Delay]) and gives the tokens back if the holder will
//     not ([Reservation.Cancel]), as golang.org/x/time/rate's do.
//   - [Limiter.SetRate] and [Limiter.SetBurst] retune a running limiter,
//     keeping the tokens in the bucket (as x/time/rate's SetLimit and
//     SetBurst); [Limiter.Rate], [Limiter.Burst] and [Limiter.Tokens] read
//     it; [Limiter.Stats] adds the refusals since New, and
//     [Limiter.Snapshot] gives them in the shape of every guard, for a
//     telemetry.Registry. [WithObserver] reports refusals and waits as
//     telemetry events ([EventRefused], [EventWaited]; [Kind] is the
//     kind of the events and snapshots); a call admitted at once emits
//     nothing.
//   - [Policy] makes a Limiter a layer of a resilience.Policy[T] that
//     refuses at once; [WaitPolicy] makes one that waits.
//   - [NewKeyed] creates a [Keyed]: one bucket per key, for at most
//     [WithMaxKeys] keys, least recently used forgotten first;
//     [Keyed.Allow], [Keyed.Limiter] and [Keyed.Len] use it;
//     [Keyed.SetRate] and [Keyed.SetBurst] retune every key at once;
//     [Keyed.Name] and [Keyed.Snapshot] (the keys, the empty ones and the
//     five with the most refusals) make it a telemetry.Guard;
//     [KeyedPolicy] makes it a layer that refuses at once, keyed by a
//     function of the call's context.
//
// # Settings
//
// Each option sets the [Config] field of its name; a zero field means the
// default below (a zero Rate or Burst: New's).
//
//	option, field            default                              unit
//	(rate), Rate             New's argument                       events per second, up to 1e9; +Inf admits
//	                                                              everything; resilience.Off (or 0 given to
//	                                                              New) switches the refill off: Burst events
//	                                                              in all; SetRate changes it at run time
//	(burst), Burst           New's argument                       events, 1 to 2^52 (0 allowed with +Inf);
//	                                                              SetBurst changes it at run time
//	WithMaxWait, MaxWait     0: no limit but the context          time.Duration: the longest Wait; a longer
//	                                                              wait is refused at once
//	WithMaxKeys, MaxKeys     8192                                 keys a Keyed tracks; no Off: a Keyed is
//	                                                              always bounded
//	WithName, Name           unnamed                              in errors and in the layer "ratelimit(Name)"
//	WithClock, Clock         clock.Real()
//	WithObserver, Observer   nil: no events                       not in JSON
//
// In a Config, "no refill" is written Off ("Rate": -1 in JSON), since a zero
// Rate means New's; +Inf is "+Inf".
//
// # Events
//
// With an observer, the limiter reports ratelimit.refused for each
// refusal of Allow, AllowN or Wait (Err, and Wait = its Retry-After, 0 from
// Allow and AllowN) and ratelimit.waited when a call waited for its token
// (Wait = the time waited); nothing for a call admitted at once. A Keyed's
// events leave Key empty (naming the key would allocate).
//
// # Keyed limiters and client input
//
// A [Keyed] costs O(1) per call and its memory is bounded by MaxKeys times
// the largest key (bound key sizes), so it is safe to key on client input
// in cost, with one caveat: an evicted key comes back with a full bucket.
// A client that can mint new keys (many addresses, a header it sets) can
// push other keys out and regain their bursts; at worst, with more distinct
// keys in a cycle than MaxKeys, every key is evicted before it comes back
// and the limit does not hold at all (MaxKeys 4 and 6 keys in turn: 160 000
// of 160 000 calls allowed). Size MaxKeys above the keys active within one
// refill period (Burst/Rate), and key on what a client cannot vary at will
// (an authenticated identity). [Keyed.SetRate] and [Keyed.SetBurst] retune
// every tracked key at once (each keeps its tokens; O(keys), under the
// Keyed's lock) and the keys tracked afterwards.
//
// # Retuning and reservations
//
// SetRate and SetBurst keep the tokens in the bucket (capped at the new
// burst, rounded against the caller), so the bound "at most Burst + Rate·w
// in any interval of length w" holds for the new settings from the change
// on; waits in progress keep their times and their tokens become a debt of
// the new bucket. Tokens is fractional, and negative while tokens are
// taken ahead. A Reservation's Cancel gives the tokens back less those
// that later callers took ahead (x/time/rate's rule); a cancel after the
// time to act, or after a change of rate or burst, gives nothing back.
// There is no DelayFrom, CancelAt or ReserveN(t, n): the limiter's Clock
// gives the time (a clock.Fake in tests). Allow, Wait and Tokens stay
// lock-free and allocation-free; a change allocates a new bucket.
//
// # Units
//
// Rates are events per second (a float64; at most 1e9, or +Inf for no
// limit, or resilience.Off for no refill; 0 panics in New and SetRate);
// bursts and n are counts of events;
// durations are [time.Duration] values (nanoseconds).
//
// # Precision
//
// Time is read in nanoseconds. Let T = 1/Rate, the interval between
// tokens. When T is a whole number of nanoseconds (as with Every(d), or any
// Rate dividing 1e9) and Burst·T, the time a drained bucket takes to
// refill, is at most 2^61 ns (73 years), the bucket is exact. Otherwise
// rounding goes against the caller: the bound above still holds exactly,
// and an event that an exact bucket would let pass may be refused and pass
// a little later:
//
//   - by at most 2ns, while Burst·⌈T⌉ <= 2^61 ns;
//   - beyond that (a huge burst at a low rate, such as New(1, 1<<52) or one
//     event a year with a burst of 1000), time is counted in coarser units
//     of T/⌊2^61/Burst⌋, about Burst·T/2^61, so that the bucket still fits
//     in 61 bits: an event may pass up to 2 such units late, which is under
//     0.4% of T (Burst <= 1<<52). For New(1, 1<<52) that is up to 3.9ms;
//     for one event a year with a burst of 1000, up to 28ns.
//
// A limiter's clock runs for 73 years after it is created, then stops (the
// bucket no longer refills).
//
// # Errors
//
// A refusal is a *resilience.RefusedError carrying the limiter's name and, as
// RetryAfter(), the wait until the tokens asked for are there; it matches
// [ErrLimited] and resilience.ErrRefused through errors.Is. WaitN asked
// for more than the burst returns an error matching [ErrExceedsBurst]
// (no wait would help). A wait cut
// short by the caller's context returns ctx.Err(), the caller's own doing
// and not the dependency's failure. Invalid configuration panics in New
// with a message naming the field and the value; [Config.Validate] returns
// the same message as an error.
//
// # Algorithm and cost
//
// The bucket is the Generic Cell Rate Algorithm (GCRA, virtual scheduling)
// of the ATM Forum Traffic Management Specification 4.0 (1996): one atomic
// int64, the time at which the bucket will be full again. Allow reads the
// clock once and does one compare-and-swap: lock-free, and it allocates
// nothing. With the default clock the time is read from the runtime's
// monotonic clock (time.Since), about half the cost of time.Now. A change
// of rate or burst replaces that number by one that holds the same
// tokens under the new settings; only changes take a lock, and calls
// running at that instant retry on the new bucket.
package ratelimit
