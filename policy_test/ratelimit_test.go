package policytest

import (
	"context"
	"errors"
	"math"
	"math/big"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

// rlEvent is one request to a limiter: at ns since the start, for n
// tokens, and whether it was admitted.
type rlEvent struct {
	At       int64
	N        int
	Admitted bool
}

// rate is a rate in events per nanosecond, exactly, with a float64
// approximation for quick comparisons.
type rate struct {
	exact  *big.Rat
	approx float64
}

func ratePerNs(eventsPerSecond float64) rate {
	r := new(big.Rat).SetFloat64(eventsPerSecond)
	r.Quo(r, big.NewRat(1e9, 1))
	f, _ := r.Float64()
	return rate{r, f}
}

// effectiveRate is the documented meaning of a Rate: an interval 1e9/Rate
// within a relative 2^-50 of a whole number of nanoseconds is exactly that
// interval.
func effectiveRate(eventsPerSecond float64) rate {
	if t := 1e9 / eventsPerSecond; math.Abs(t-math.Round(t)) <= math.Round(t)*0x1p-50 {
		r := big.NewRat(1, int64(math.Round(t)))
		f, _ := r.Float64()
		return rate{r, f}
	}
	return ratePerNs(eventsPerSecond)
}

// exceeds reports whether x > r·w, exactly.
func (r rate) exceeds(x, w int64) bool {
	rw := r.approx * float64(w)
	if d := float64(x) - rw; math.Abs(d) > 1e-6*(1+math.Abs(rw)) {
		return d > 0
	}
	return new(big.Rat).SetInt64(x).Cmp(new(big.Rat).Mul(r.exact, new(big.Rat).SetInt64(w))) > 0
}

// checkBucketBounds checks the two sides of the token-bucket contract on a
// history of requests:
//   - safety, exactly: in every interval [s, e] (s and e admitted times),
//     the tokens admitted are at most burst + r·(e - s);
//   - liveness, to within slack ns: a request for 1 <= n <= burst tokens at
//     e is refused only if, for some s <= e (an admitted time, or e itself
//     with nothing before it), admitting it would put more than
//     burst + r·(e - s - slack) tokens in [s, e]: only if an exact bucket
//     would have less than slack ns worth of tokens to spare after it.
func checkBucketBounds(t *rapid.T, events []rlEvent, burst int, r rate, slack int64) {
	t.Helper()
	var admitted []rlEvent
	for _, ev := range events {
		if ev.Admitted {
			admitted = append(admitted, ev)
			// Safety: every window ending at this event.
			sum := 0
			for i := len(admitted) - 1; i >= 0; i-- {
				sum += admitted[i].N
				if r.exceeds(int64(sum-burst), ev.At-admitted[i].At) {
					t.Fatalf("%d tokens admitted in [%d, %d] ns, more than %d + %v·%d\nhistory: %+v",
						sum, admitted[i].At, ev.At, burst, r.exact, ev.At-admitted[i].At, events)
				}
			}
			continue
		}
		if ev.N < 1 || ev.N > burst {
			continue
		}
		// Liveness: some window must justify the refusal.
		justified := r.exceeds(int64(ev.N-burst), -slack)
		sum := 0
		for i := len(admitted) - 1; i >= 0 && !justified; i-- {
			sum += admitted[i].N
			justified = r.exceeds(int64(sum+ev.N-burst), ev.At-admitted[i].At-slack)
		}
		if !justified {
			t.Fatalf("refused %d tokens at %d ns, but no window would exceed %d + %v·(w - %d)\nhistory: %+v",
				ev.N, ev.At, burst, r.exact, slack, events)
		}
	}
}

// drawGap draws the time to the next request, in ns, around the emission
// interval tNs: often 0 (a burst), often within a few intervals, sometimes
// an exact multiple of it (token boundaries), sometimes long.
func drawGap(t *rapid.T, tNs float64, burst int) int64 {
	bound := func(f float64) int64 { return int64(min(f, 1e15)) }
	switch rapid.IntRange(0, 5).Draw(t, "gapKind") {
	case 0:
		return 0
	case 1:
		return rapid.Int64Range(0, bound(tNs)+1).Draw(t, "gap")
	case 2:
		return bound(math.Round(tNs * float64(rapid.IntRange(1, 3).Draw(t, "intervals"))))
	case 3:
		return bound(math.Round(tNs*float64(rapid.IntRange(1, 3).Draw(t, "intervals")))) + rapid.Int64Range(-2, 2).Draw(t, "jitter")
	case 4:
		return rapid.Int64Range(0, bound(tNs*float64(2*burst))+1).Draw(t, "gap")
	}
	return rapid.Int64Range(0, bound(tNs*float64(10*burst))+1).Draw(t, "gap")
}

// drawN draws how many tokens a request asks for: mostly 1.
func drawN(t *rapid.T, burst int) int {
	if rapid.IntRange(0, 3).Draw(t, "batch") > 0 {
		return 1
	}
	return rapid.IntRange(0, burst+1).Draw(t, "n")
}

// run replays draws of gaps and requests on a limiter with a fake clock,
// through AllowN or, for single tokens, sometimes through the refusing
// policy; it returns the history. onRefused, if not nil, is told of each
// policy refusal with its Retry-After hint. progress is called after each
// request (see stallWatchdog).
func run(t *rapid.T, progress func(), l *ratelimit.Limiter, fake *clock.Fake, tNs float64, burst int,
	decide func(ev rlEvent, gap int64), onRefused func(ev rlEvent, retryAfter time.Duration)) []rlEvent {
	p := ratelimit.Policy[int](l)
	op := func(context.Context) (int, error) { return 0, nil }
	var events []rlEvent
	var now int64
	for range rapid.IntRange(1, 60).Draw(t, "requests") {
		gap := max(drawGap(t, tNs, burst), 0)
		n := drawN(t, burst)
		fake.Advance(time.Duration(gap))
		now += gap
		ev := rlEvent{At: now, N: n}
		var err error
		if n == 1 && rapid.Bool().Draw(t, "viaPolicy") {
			_, err = p.Do(context.Background(), op)
			ev.Admitted = err == nil
		} else {
			ev.Admitted = l.AllowN(n)
		}
		if decide != nil {
			decide(ev, gap)
		}
		if err != nil {
			if !errors.Is(err, ratelimit.ErrLimited) {
				t.Fatalf("policy refusal %v does not match ErrLimited", err)
			}
			if d, _ := resilience.RetryAfter(err); onRefused != nil {
				onRefused(ev, d)
			}
		}
		events = append(events, ev)
		progress()
	}
	return events
}

// TestRateLimitEveryMatchesBucket: with a whole-nanosecond interval d
// (Every(d)), the limiter is exactly a reference token bucket, kept as
// credit in nanoseconds: refills one ns per ns up to burst·d, and n tokens
// cost n·d. Every decision and every Retry-After hint must match it, and
// the window bounds hold with no slack.
func TestRateLimitEveryMatchesBucket(t *testing.T) {
	progress, stop := stallWatchdog(t.Name())
	defer stop()
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.OneOf(rapid.Int64Range(1, 10), rapid.Int64Range(1, 1e6), rapid.Int64Range(1, 1e11)).Draw(t, "intervalNs")
		burst := rapid.IntRange(1, 8).Draw(t, "burst")
		fake := clock.NewFake()
		l := ratelimit.New(ratelimit.Every(time.Duration(d)), burst, ratelimit.WithClock(fake))
		credit := int64(burst) * d // the model
		events := run(t, progress, l, fake, float64(d), burst,
			func(ev rlEvent, gap int64) {
				credit = min(credit+gap, int64(burst)*d)
				want := ev.N <= burst && int64(ev.N)*d <= credit
				if ev.Admitted != want {
					t.Fatalf("%d tokens at %d ns: admitted %v, the bucket (credit %d ns of %d) says %v",
						ev.N, ev.At, ev.Admitted, credit, int64(burst)*d, want)
				}
				if want {
					credit -= int64(ev.N) * d
				}
			},
			func(ev rlEvent, retryAfter time.Duration) {
				if want := time.Duration(d - credit); retryAfter != want {
					t.Fatalf("refused at %d ns with credit %d: Retry-After %v, want %v", ev.At, credit, retryAfter, want)
				}
			})
		checkBucketBounds(t, events, burst, rate{big.NewRat(1, d), 1 / float64(d)}, 0)
	})
}

// TestRateLimitAnyRateKeepsBounds: for any rate (events per second, as a
// float64) the limiter never admits more than burst + rate·w tokens in any
// interval of length w, exactly, and refuses only what an exact bucket
// would admit with less than 2ns worth of tokens to spare.
func TestRateLimitAnyRateKeepsBounds(t *testing.T) {
	progress, stop := stallWatchdog(t.Name())
	defer stop()
	rapid.Check(t, func(t *rapid.T) {
		perSecond := rapid.OneOf(
			rapid.Float64Range(1e-6, 1e9),
			rapid.Float64Range(1, 1e4),
			rapid.SampledFrom([]float64{3, 7, 1e9 / 3, 0.3, 1.0 / 60, 999_999_999, 1.5, 1 << 20, 1e9, 1e-3}),
		).Draw(t, "perSecond")
		burst := rapid.IntRange(1, 8).Draw(t, "burst")
		fake := clock.NewFake()
		l := ratelimit.New(perSecond, burst, ratelimit.WithClock(fake))
		events := run(t, progress, l, fake, 1e9/perSecond, burst, nil, nil)
		checkBucketBounds(t, events, burst, effectiveRate(perSecond), 2)
	})
}

// TestRateLimitRetryAfterIsExact: after any history, a refused call's
// Retry-After is the shortest wait after which the same call passes: 1ns
// less is still refused.
func TestRateLimitRetryAfterIsExact(t *testing.T) {
	progress, stop := stallWatchdog(t.Name())
	defer stop()
	rapid.Check(t, func(t *rapid.T) {
		perSecond := rapid.OneOf(
			rapid.Float64Range(1e-3, 1e9),
			rapid.Custom(func(t *rapid.T) float64 {
				return ratelimit.Every(time.Duration(rapid.Int64Range(1, 1e10).Draw(t, "intervalNs")))
			}),
		).Draw(t, "perSecond")
		burst := rapid.IntRange(1, 8).Draw(t, "burst")
		fake := clock.NewFake()
		l := ratelimit.New(perSecond, burst, ratelimit.WithClock(fake))
		_ = run(t, progress, l, fake, 1e9/perSecond, burst, nil, nil)
		_, err := ratelimit.Policy[int](l).Do(context.Background(), func(context.Context) (int, error) { return 0, nil })
		if err == nil {
			t.Skip("the last call passed")
		}
		d, _ := resilience.RetryAfter(err)
		if d <= 0 || d == time.Duration(math.MaxInt64) {
			t.Fatalf("Retry-After %v", d)
		}
		fake.Advance(d - 1)
		if l.Allow() {
			t.Fatalf("admitted 1ns before Retry-After %v", d)
		}
		fake.Advance(1)
		if !l.Allow() {
			t.Fatalf("refused at Retry-After %v", d)
		}
	})
}

// TestKeyedNeverTracksMoreThanItsCap drives a Keyed with random keys from a
// key space larger than its cap, against a model of per-key buckets and
// least-recently-used order: Len never exceeds the cap, the key forgotten
// is always the least recently used one, and a forgotten key comes back
// with a full bucket.
func TestKeyedNeverTracksMoreThanItsCap(t *testing.T) {
	progress, stop := stallWatchdog(t.Name())
	defer stop()
	rapid.Check(t, func(t *rapid.T) {
		maxKeys := rapid.IntRange(1, 6).Draw(t, "maxKeys")
		burst := rapid.IntRange(1, 3).Draw(t, "burst")
		fake := clock.NewFake()
		const interval = time.Second
		k := ratelimit.NewKeyed[int](ratelimit.Every(interval), burst, ratelimit.WithClock(fake), ratelimit.WithMaxKeys(maxKeys))
		var lru []int                     // model: tracked keys, least recently used first
		credit := map[int]time.Duration{} // model: per-key credit, for tracked keys
		for range rapid.IntRange(1, 100).Draw(t, "steps") {
			if rapid.IntRange(0, 3).Draw(t, "advance") == 0 {
				d := time.Duration(rapid.IntRange(0, 3000).Draw(t, "ms")) * time.Millisecond
				fake.Advance(d)
				for key := range credit {
					credit[key] = min(credit[key]+d, time.Duration(burst)*interval)
				}
			}
			key := rapid.IntRange(0, 2*maxKeys).Draw(t, "key")
			if i := indexOf(lru, key); i >= 0 {
				lru = append(lru[:i], lru[i+1:]...)
			} else {
				if len(lru) == maxKeys {
					delete(credit, lru[0])
					lru = lru[1:]
				}
				credit[key] = time.Duration(burst) * interval
			}
			lru = append(lru, key)
			want := credit[key] >= interval
			if want {
				credit[key] -= interval
			}
			if got := k.Allow(key); got != want {
				t.Fatalf("Allow(%d) = %v, want %v (tracked, oldest first: %v)", key, got, want, lru)
			}
			if got := k.Len(); got != len(lru) || got > maxKeys {
				t.Fatalf("Len() = %d, want %d (cap %d)", got, len(lru), maxKeys)
			}
			progress()
		}
	})
}

func indexOf(s []int, v int) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// Regression schedules shrunk by rapid from TestRateLimitAnyRateKeepsBounds
// and TestRateLimitRetryAfterIsExact, at 1.5 events per second (an
// interval of 666666666⅔ns, between two units of time). The limiter once
// tested the deficit from the rounded-down time against a TAT reset to the
// rounded-up time, so a full bucket refused its last token.

// A full bucket of 1, 1ns after the start: the token is there.
func TestRateLimitRegressionFullBucketBetweenUnits(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(1.5, 1, ratelimit.WithClock(fake))
	fake.Advance(time.Nanosecond)
	if !l.Allow() {
		t.Fatal("a full bucket refused its token")
	}
	// And the whole burst of a bigger bucket, taken at once.
	l2 := ratelimit.New(1.5, 2, ratelimit.WithClock(fake))
	fake.Advance(time.Nanosecond)
	if !l2.AllowN(2) {
		t.Fatal("a full bucket refused its burst")
	}
}

// Taken one at a time at a moment between units, the last token of a full
// bucket may be refused (the documented rounding against the caller), but
// passes at most 2ns later.
func TestRateLimitRegressionBurstOneAtATimeBetweenUnits(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(1.5, 2, ratelimit.WithClock(fake))
	fake.Advance(time.Nanosecond)
	if !l.Allow() {
		t.Fatal("first token refused")
	}
	for late := range 3 {
		if l.Allow() {
			return
		}
		if late == 2 {
			break
		}
		fake.Advance(time.Nanosecond)
	}
	t.Fatal("second token still refused 2ns later")
}

// After Allow at 0, the policy's Retry-After (⌈666666666⅔⌉ = 666666667ns)
// is when the next token passes.
func TestRateLimitRegressionRetryAfterBetweenUnits(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(1.5, 1, ratelimit.WithClock(fake))
	_ = l.Allow()
	_, err := ratelimit.Policy[int](l).Do(context.Background(), func(context.Context) (int, error) { return 0, nil })
	d, ok := resilience.RetryAfter(err)
	if !ok || d != 666666667 {
		t.Fatalf("Retry-After %v, %v; want 666666667ns", d, ok)
	}
	fake.Advance(d - 1)
	if l.Allow() {
		t.Fatal("admitted before Retry-After")
	}
	fake.Advance(1)
	if !l.Allow() {
		t.Fatal("refused at Retry-After")
	}
}
