package policytest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

// rlEvent is one request to a limiter: at ns since the start, for n
// tokens, and whether it was admitted; Seg counts the changes of rate or
// burst before it (the events of one Seg are decided under one rate and
// burst).
type rlEvent struct {
	At       int64
	N        int
	Admitted bool
	Seg      int
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

// rlRun replays draws of gaps and requests on a limiter with a fake clock,
// through AllowN or, for single tokens, sometimes through the refusing
// policy.
type rlRun struct {
	l        *ratelimit.Limiter
	fake     *clock.Fake
	tNs      float64 // the interval in ns, around which gaps are drawn
	burst    int     // the burst, around which requests are drawn
	progress func()  // called after each request (see stallWatchdog)
	// between, if not nil, runs after each gap and before the request, told
	// the gap; it reports whether it changed the rate or the burst (and
	// then tNs and burst), which starts a new Seg.
	between func(gap int64) bool
	// decide, if not nil, is told of each request's outcome.
	decide func(ev rlEvent)
	// onRefused, if not nil, is told of each policy refusal with its
	// Retry-After hint.
	onRefused func(ev rlEvent, retryAfter time.Duration)
}

// run returns the history of requests.
func (r *rlRun) run(t *rapid.T) []rlEvent {
	p := ratelimit.Policy[int](r.l)
	op := func(context.Context) (int, error) { return 0, nil }
	var events []rlEvent
	var now int64
	seg := 0
	for range rapid.IntRange(1, 60).Draw(t, "requests") {
		gap := max(drawGap(t, r.tNs, r.burst), 0)
		r.fake.Advance(time.Duration(gap))
		now += gap
		if r.between != nil && r.between(gap) {
			seg++
		}
		n := drawN(t, r.burst)
		ev := rlEvent{At: now, N: n, Seg: seg}
		var err error
		if n == 1 && rapid.Bool().Draw(t, "viaPolicy") {
			_, err = p.Do(context.Background(), op)
			ev.Admitted = err == nil
		} else {
			ev.Admitted = r.l.AllowN(n)
		}
		if r.decide != nil {
			r.decide(ev)
		}
		if err != nil {
			if !errors.Is(err, ratelimit.ErrLimited) {
				t.Fatalf("policy refusal %v does not match ErrLimited", err)
			}
			if d, _ := resilience.RetryAfter(err); r.onRefused != nil {
				r.onRefused(ev, d)
			}
		}
		events = append(events, ev)
		r.progress()
	}
	return events
}

// rlReservation is a reservation in the exact model of
// TestRateLimitEveryMatchesBucket.
type rlReservation struct {
	r         *ratelimit.Reservation
	n         int
	end       int64 // the end of the schedule (the bucket's TAT) it set, ns
	floor     int64 // the TAT of a step acting when it does: max(end, act + Burst·T); later TAT beyond it was reserved behind it
	act       int64 // when it may act, ns
	seg       int   // the Seg it was made in
	cancelled bool  // cancelled before its time to act: it does not act
}

// drawInterval draws a whole-nanosecond interval between tokens.
func drawInterval(t *rapid.T) int64 {
	return rapid.OneOf(rapid.Int64Range(1, 10), rapid.Int64Range(1, 1e6), rapid.Int64Range(1, 1e11)).Draw(t, "intervalNs")
}

// TestRateLimitEveryMatchesBucket: with a whole-nanosecond interval d
// (Every(d)), the limiter is exactly a reference token bucket, kept as
// credit in nanoseconds: refills one ns per ns up to burst·d, and n tokens
// cost n·d. Every decision, every Retry-After hint and Tokens() after every
// step must match it, through:
//   - Reserve, which takes n·d of credit at once, into debt if need be, and
//     must say the delay until the credit would have been there;
//   - Cancel, which gives back n·d less the credit taken ahead since (the
//     end of the schedule now minus the end the reservation set), if its
//     time to act has not passed and the rate and burst have not changed
//     since;
//   - SetRate(Every(d2)), which keeps the tokens: credit·d2/d, rounded
//     down, at most burst·d2; SetBurst(b2), which keeps them up to b2.
//
// And the window bounds hold with no slack for each stretch between
// changes: the requests admitted and the reservations that act, decided
// in it, under its rate and burst (safety); within the first, exactness is
// liveness.
func TestRateLimitEveryMatchesBucket(t *testing.T) {
	progress, stop := stallWatchdog(t.Name())
	defer stop()
	var cov struct{ reservedAhead, gaveBackAll, gaveBackPart, keptSpent, retuned, reburst int }
	reached := func() bool {
		return cov.reservedAhead > 0 && cov.gaveBackAll > 0 && cov.gaveBackPart > 0 && cov.keptSpent > 0 && cov.retuned > 0 && cov.reburst > 0
	}
	// Some actions are rare at rapid's default 100 checks: run the property
	// again (at most 10 times in all) until the schedules reached each.
	for run := 0; run == 0 || (run < 10 && !t.Failed() && !reached()); run++ {
		rapid.Check(t, func(t *rapid.T) { rateLimitEveryMatchesBucket(t, progress, &cov) })
	}
	t.Logf("coverage: %d reservations taken ahead, cancels giving back all %d, part %d, nothing %d; %d SetRate, %d SetBurst",
		cov.reservedAhead, cov.gaveBackAll, cov.gaveBackPart, cov.keptSpent, cov.retuned, cov.reburst)
	if !t.Failed() && !reached() {
		t.Error("the schedules never reached some of the actions")
	}
}

// rateLimitEveryMatchesBucket is one check of TestRateLimitEveryMatchesBucket.
func rateLimitEveryMatchesBucket(t *rapid.T, progress func(), cov *struct{ reservedAhead, gaveBackAll, gaveBackPart, keptSpent, retuned, reburst int }) {
	{
		d := drawInterval(t)
		burst := rapid.IntRange(1, 8).Draw(t, "burst")
		fake := clock.NewFake()
		l := ratelimit.New(ratelimit.Every(time.Duration(d)), burst, ratelimit.WithClock(fake))
		credit := int64(burst) * d // the model, below 0 when tokens were taken ahead
		full := func() int64 { return int64(burst) * d }
		type shape struct {
			d     int64
			burst int
		}
		shapes := []shape{{d, burst}} // per Seg
		var reservations []*rlReservation
		var now int64
		checkTokens := func(what string) {
			if got, want := l.Tokens(), float64(credit)/float64(d); got != want {
				t.Fatalf("after %s at %d ns: Tokens() = %v, the bucket (credit %d ns, interval %d) says %v", what, now, got, credit, d, want)
			}
		}
		r := &rlRun{l: l, fake: fake, tNs: float64(d), burst: burst, progress: progress}
		r.between = func(gap int64) bool {
			now += gap
			credit = min(credit+gap, full())
			checkTokens("a gap")
			seg := len(shapes) - 1
			switch rapid.IntRange(0, 15).Draw(t, "between") {
			case 0, 1, 2:
				n := rapid.IntRange(0, burst+1).Draw(t, "reserveN")
				res := l.ReserveN(n)
				wantOK, wantDelay := n <= burst, resilience.Never
				if wantOK {
					wantDelay = 0 // n = 0 takes nothing and waits for nothing
					if n > 0 {
						wantDelay = time.Duration(max(int64(n)*d-credit, 0))
					}
				}
				if res.OK() != wantOK || res.Delay() != wantDelay {
					t.Fatalf("ReserveN(%d) at %d ns with credit %d: OK %v, Delay %v; want %v, %v",
						n, now, credit, res.OK(), res.Delay(), wantOK, wantDelay)
				}
				if wantOK && n > 0 {
					credit -= int64(n) * d
					end := now + full() - credit
					reservations = append(reservations, &rlReservation{r: res, n: n, end: end, floor: max(end, now+int64(wantDelay)+full()), act: now + int64(wantDelay), seg: seg})
					if wantDelay > 0 {
						cov.reservedAhead++
					}
				}
				checkTokens("Reserve")
			case 3, 4, 5:
				if len(reservations) == 0 {
					break
				}
				c := reservations[rapid.IntRange(0, len(reservations)-1).Draw(t, "cancel")]
				c.r.Cancel()
				if !c.cancelled && now <= c.act {
					c.cancelled = true
					if c.seg == seg {
						// Tokens that later steps reserved behind it (due after
						// it) stay spent; those taken at its time to act, from
						// what was there, do not (x/time/rate's rule).
						behind := max(now+full()-credit-c.floor, 0)
						switch back := int64(c.n)*d - behind; {
						case back <= 0:
							cov.keptSpent++
						case behind > 0:
							cov.gaveBackPart++
							credit = min(credit+back, full())
						default:
							cov.gaveBackAll++
							credit = min(credit+back, full())
						}
					}
				}
				checkTokens("Cancel")
			case 6:
				d2 := drawInterval(t)
				l.SetRate(ratelimit.Every(time.Duration(d2)))
				credit = min(floorMulDiv(credit, d2, d), int64(burst)*d2)
				d = d2
				shapes = append(shapes, shape{d, burst})
				r.tNs = float64(d)
				cov.retuned++
				checkTokens(fmt.Sprintf("SetRate(Every(%d))", d2))
				return true
			case 7:
				b2 := rapid.IntRange(1, 8).Draw(t, "newBurst")
				l.SetBurst(b2)
				credit = min(credit, int64(b2)*d)
				burst = b2
				shapes = append(shapes, shape{d, burst})
				r.burst = burst
				cov.reburst++
				checkTokens(fmt.Sprintf("SetBurst(%d)", b2))
				return true
			}
			return false
		}
		r.decide = func(ev rlEvent) {
			want := ev.N == 0 || ev.N <= burst && int64(ev.N)*d <= credit // AllowN(0) is true, even in debt
			if ev.Admitted != want {
				t.Fatalf("%d tokens at %d ns: admitted %v, the bucket (credit %d ns of %d) says %v",
					ev.N, ev.At, ev.Admitted, credit, full(), want)
			}
			if want {
				credit -= int64(ev.N) * d
			}
			checkTokens("a request")
		}
		r.onRefused = func(ev rlEvent, retryAfter time.Duration) {
			if want := time.Duration(d - credit); retryAfter != want {
				t.Fatalf("refused at %d ns with credit %d: Retry-After %v, want %v", ev.At, credit, retryAfter, want)
			}
		}
		events := r.run(t)
		// With neither changes nor reservations, the refusals go in too, and
		// checkBucketBounds checks liveness as well.
		plain := len(shapes) == 1 && len(reservations) == 0
		for seg, sh := range shapes {
			var acts []rlEvent
			for _, ev := range events {
				if ev.Seg == seg && (ev.Admitted || plain) {
					acts = append(acts, ev)
				}
			}
			for _, c := range reservations {
				if c.seg == seg && !c.cancelled {
					acts = append(acts, rlEvent{At: c.act, N: c.n, Admitted: true, Seg: seg})
				}
			}
			slices.SortStableFunc(acts, func(a, b rlEvent) int { return cmp.Compare(a.At, b.At) })
			checkBucketBounds(t, acts, sh.burst, rate{big.NewRat(1, sh.d), 1 / float64(sh.d)}, 0)
		}
	}
}

// drawRate draws a rate in events per second, over the whole range and at
// values whose interval falls between two nanoseconds.
func drawRate(t *rapid.T, label string) float64 {
	return rapid.OneOf(
		rapid.Float64Range(1e-6, 1e9),
		rapid.Float64Range(1, 1e4),
		rapid.SampledFrom([]float64{3, 7, 1e9 / 3, 0.3, 1.0 / 60, 999_999_999, 1.5, 1 << 20, 1e9, 1e-3}),
	).Draw(t, label)
}

// TestRateLimitAnyRateKeepsBounds: for any rate (events per second, as a
// float64) the limiter never admits more than burst + rate·w tokens in any
// interval of length w, exactly, and refuses only what an exact bucket
// would admit with less than 2ns worth of tokens to spare.
//
// In half the runs SetRate and SetBurst change the limiter at random
// steps. Each change keeps the tokens (capped at the new burst), rounded
// against the caller by less than 3ns worth of them at the new rate; and
// from each change on, the requests admitted keep the bound of the new
// rate and burst, exactly.
func TestRateLimitAnyRateKeepsBounds(t *testing.T) {
	progress, stop := stallWatchdog(t.Name())
	defer stop()
	var changes int
	rapid.Check(t, func(t *rapid.T) {
		perSecond := drawRate(t, "perSecond")
		burst := rapid.IntRange(1, 8).Draw(t, "burst")
		fake := clock.NewFake()
		l := ratelimit.New(perSecond, burst, ratelimit.WithClock(fake))
		type shape struct {
			perSecond float64
			burst     int
		}
		shapes := []shape{{perSecond, burst}}
		r := &rlRun{l: l, fake: fake, tNs: 1e9 / perSecond, burst: burst, progress: progress}
		if rapid.Bool().Draw(t, "retune") {
			r.between = func(int64) bool {
				sh := shapes[len(shapes)-1]
				before := l.Tokens()
				switch rapid.IntRange(0, 11).Draw(t, "change") {
				case 0:
					sh.perSecond = drawRate(t, "newPerSecond")
					l.SetRate(sh.perSecond)
				case 1:
					sh.burst = rapid.IntRange(1, 8).Draw(t, "newBurst")
					l.SetBurst(sh.burst)
				default:
					return false
				}
				want, got := min(before, float64(sh.burst)), l.Tokens()
				if slack := 3 * sh.perSecond / 1e9; got > want*(1+1e-12)+1e-12 || got < want-slack-1e-9 {
					t.Fatalf("change to rate %v, burst %d: Tokens() %v -> %v, want %v, less at most %v", sh.perSecond, sh.burst, before, got, want, slack)
				}
				if l.Rate() != sh.perSecond || l.Burst() != sh.burst {
					t.Fatalf("Rate() %v, Burst() %d; want %v, %d", l.Rate(), l.Burst(), sh.perSecond, sh.burst)
				}
				shapes = append(shapes, sh)
				r.tNs, r.burst = 1e9/sh.perSecond, sh.burst
				changes++
				return true
			}
		}
		events := r.run(t)
		for seg, sh := range shapes {
			var in []rlEvent
			for _, ev := range events {
				// Refusals only where the bucket started full: liveness
				// after a change depends on the tokens carried over.
				if ev.Seg == seg && (ev.Admitted || seg == 0) {
					in = append(in, ev)
				}
			}
			checkBucketBounds(t, in, sh.burst, effectiveRate(sh.perSecond), 2)
		}
	})
	if !t.Failed() && changes == 0 {
		t.Error("the schedules never changed the rate or the burst")
	}
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
		(&rlRun{l: l, fake: fake, tNs: 1e9 / perSecond, burst: burst, progress: progress}).run(t)
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
// with a full bucket. Keyed.SetRate and SetBurst, at random steps, change
// every tracked key's bucket as Limiter.SetRate and SetBurst change one
// (tokens kept: credit·i2/i rounded down, capped at the new burst), and the
// buckets of keys tracked afterwards.
func TestKeyedNeverTracksMoreThanItsCap(t *testing.T) {
	progress, stop := stallWatchdog(t.Name())
	defer stop()
	rapid.Check(t, func(t *rapid.T) {
		maxKeys := rapid.IntRange(1, 6).Draw(t, "maxKeys")
		burst := rapid.IntRange(1, 3).Draw(t, "burst")
		fake := clock.NewFake()
		interval := time.Second
		k := ratelimit.NewKeyed[int](ratelimit.Every(interval), burst, ratelimit.WithClock(fake), ratelimit.WithMaxKeys(maxKeys))
		var lru []int                     // model: tracked keys, least recently used first
		credit := map[int]time.Duration{} // model: per-key credit, for tracked keys
		for range rapid.IntRange(1, 100).Draw(t, "steps") {
			// SetRate and SetBurst change every tracked key's bucket, each
			// keeping its tokens (capped at the new burst), and the buckets
			// of keys tracked from then on.
			switch rapid.IntRange(0, 15).Draw(t, "change") {
			case 0:
				i2 := time.Duration(rapid.SampledFrom([]int64{250, 500, 1000, 1500, 2000}).Draw(t, "intervalMs")) * time.Millisecond
				k.SetRate(ratelimit.Every(i2))
				for key, c := range credit {
					credit[key] = min(time.Duration(floorMulDiv(int64(c), int64(i2), int64(interval))), time.Duration(burst)*i2)
				}
				interval = i2
			case 1:
				burst = rapid.IntRange(1, 3).Draw(t, "newBurst")
				k.SetBurst(burst)
				for key, c := range credit {
					credit[key] = min(c, time.Duration(burst)*interval)
				}
			}
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

// floorMulDiv returns floor(x·m/d), for d > 0, without overflow.
func floorMulDiv(x, m, d int64) int64 {
	p := new(big.Int).Mul(big.NewInt(x), big.NewInt(m))
	return p.Div(p, big.NewInt(d)).Int64() // Euclidean: rounds down for d > 0
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
