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
//     telemetry events; a call admitted at once emits nothing.
//   - [Policy] makes a Limiter a layer of a resilience.Policy[T] that
//     refuses at once; [WaitPolicy] makes one that waits.
//   - [NewKeyed] creates a [Keyed]: one bucket per key, for at most
//     [WithMaxKeys] keys, least recently used forgotten first;
//     [Keyed.Allow], [Keyed.Limiter] and [Keyed.Len] use it;
//     [Keyed.SetRate] and [Keyed.SetBurst] retune every key at once.
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
