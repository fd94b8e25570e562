package ratelimit_test

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

// tokensAfter returns l.Tokens() after each of steps, a clock advance
// followed by a change or nothing.
type tuneStep struct {
	advance time.Duration
	do      func()
}

func tokensAfter(fake *clock.Fake, l *ratelimit.Limiter, steps []tuneStep) []float64 {
	var got []float64
	for _, s := range steps {
		fake.Advance(s.advance)
		if s.do != nil {
			s.do()
		}
		got = append(got, l.Tokens())
	}
	return got
}

// SetRate keeps the tokens in the bucket and refills at the new rate from
// the change on, faster or slower.
func TestSetRateKeepsTokens(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 4, ratelimit.WithClock(fake))
	got := tokensAfter(fake, l, []tuneStep{
		{0, func() { l.AllowN(3) }},                                        // 1 left
		{500 * time.Millisecond, nil},                                      // 1.5
		{0, func() { l.SetRate(ratelimit.Every(100 * time.Millisecond)) }}, // still 1.5
		{50 * time.Millisecond, nil},                                       // 2
		{100 * time.Millisecond, nil},                                      // 3
		{0, func() { l.SetRate(ratelimit.Every(10 * time.Second)) }},       // still 3
		{5 * time.Second, nil},                                             // 3.5
		{time.Hour, nil},                                                   // full: 4
	})
	want := []float64{1, 1.5, 1.5, 2, 3, 3, 3.5, 4}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("tokens mismatch (-want +got):\n%s", diff)
	}
	if r := l.Rate(); r != 0.1 {
		t.Fatalf("Rate() = %v, want 0.1", r)
	}
}

// SetBurst keeps the tokens up to the new burst: lowering drops those
// above it, raising adds none, and the bucket then fills to the new burst.
func TestSetBurstCapsTokens(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 5, ratelimit.WithClock(fake))
	got := tokensAfter(fake, l, []tuneStep{
		{0, func() { l.AllowN(1) }},    // 4
		{0, func() { l.SetBurst(2) }},  // capped: 2
		{time.Hour, nil},               // full at 2
		{0, func() { l.SetBurst(6) }},  // raised: still 2
		{2500 * time.Millisecond, nil}, // 4.5
		{time.Hour, nil},               // full at 6
		{0, func() { l.AllowN(6) }},    // the whole new burst at once
	})
	want := []float64{4, 2, 2, 2, 4.5, 6, 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("tokens mismatch (-want +got):\n%s", diff)
	}
	if l.Burst() != 6 || l.AllowN(7) {
		t.Fatalf("Burst() = %d; AllowN above it must be refused", l.Burst())
	}
}

// The admissions follow the new rate from the change on: with 1 token left
// at 1/s, a change to 10/s brings the next token 100ms later, not 1s.
func TestSetRateAdmissions(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(1, 2, ratelimit.WithClock(fake))
	l.AllowN(2)
	fake.Advance(500 * time.Millisecond) // half a token
	l.SetRate(10)                        // half a token: 50ms to go
	fake.Advance(49 * time.Millisecond)
	if l.Allow() {
		t.Fatal("admitted 1ms before the half token was refilled at the new rate")
	}
	fake.Advance(time.Millisecond)
	if !l.Allow() {
		t.Fatal("refused once the half token was refilled at the new rate")
	}
	fake.Advance(99 * time.Millisecond)
	if l.Allow() {
		t.Fatal("admitted 1ms early at the new rate")
	}
	fake.Advance(time.Millisecond)
	if !l.Allow() {
		t.Fatal("refused at the new rate's interval")
	}
}

// +Inf admits everything; a change back to a finite rate starts full. No
// refill (0 or Off) gives what is left and no more.
func TestSetRateInfAndNoRefill(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 3, ratelimit.WithClock(fake))
	l.AllowN(3)
	l.SetRate(math.Inf(1))
	if got := l.Tokens(); !math.IsInf(got, 1) {
		t.Fatalf("Tokens() at +Inf = %v, want +Inf", got)
	}
	for range 100 {
		if !l.Allow() {
			t.Fatal("refused at +Inf")
		}
	}
	l.SetRate(ratelimit.Every(time.Second))
	if got := l.Tokens(); got != 3 {
		t.Fatalf("Tokens() back from +Inf = %v, want a full bucket of 3", got)
	}
	l.AllowN(2)
	for range 2 {
		l.SetRate(resilience.Off)
		if r := l.Rate(); r != 0 {
			t.Fatalf("Rate() after SetRate(Off) = %v, want 0", r)
		}
		fake.Advance(time.Hour)
		if got := l.Tokens(); got != 1 {
			t.Fatalf("Tokens() with no refill = %v, want the 1 left", got)
		}
	}
	if !l.Allow() || l.Allow() {
		t.Fatal("with no refill: want the last token, then nothing")
	}
	fake.Advance(time.Hour)
	if l.Allow() {
		t.Fatal("refilled with no refill")
	}
}

func TestSetRateSetBurstInvalidPanics(t *testing.T) {
	inf := ratelimit.New(math.Inf(1), 0)
	l := ratelimit.New(1, 1)
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"NaN", func() { l.SetRate(math.NaN()) }, "ratelimit: SetRate: Rate must be a number of events per second, got NaN"},
		{"negative", func() { l.SetRate(-2) }, "ratelimit: SetRate: Rate must be >= 0 events per second, or Off (no refill), got -2"},
		{"too fast", func() { l.SetRate(2e9) }, "ratelimit: SetRate: Rate must be at most 1e9 events per second (one per nanosecond) or +Inf, got 2e+09"},
		{"finite with burst 0", func() { inf.SetRate(1) }, "ratelimit: SetRate: Burst must be >= 1 with a finite Rate, got 0"},
		{"burst 0", func() { l.SetBurst(0) }, "ratelimit: SetBurst: Burst must be >= 1 with a finite Rate, got 0"},
		{"burst too big", func() { l.SetBurst(1<<52 + 1) }, "ratelimit: SetBurst: Burst must be at most 4503599627370496 (1<<52), got 4503599627370497"},
	} {
		func() {
			defer func() {
				if r := recover(); r != c.want {
					t.Errorf("%s: panic %v, want %q", c.name, r, c.want)
				}
			}()
			c.f()
		}()
	}
	if l.Rate() != 1 || l.Burst() != 1 || !l.Allow() {
		t.Fatal("a refused change changed the limiter")
	}
	inf.SetBurst(2) // then a finite rate is fine
	inf.SetRate(1)
	if inf.Tokens() != 2 {
		t.Fatalf("Tokens() = %v, want 2", inf.Tokens())
	}
}

// A wait in progress keeps its end across SetRate; its token is a debt of
// the new bucket, so a caller after it waits behind it at the new rate.
func TestSetRateDuringWait(t *testing.T) {
	bubble(t, func(t *testing.T) {
		start := time.Now()
		l := ratelimit.New(ratelimit.Every(time.Second), 1)
		_ = l.Allow()
		done := make(chan time.Duration)
		go func() { _ = l.Wait(t.Context()); done <- time.Since(start) }() // due at 1s
		synctest.Wait()
		if got := l.Tokens(); got != -1 {
			t.Fatalf("Tokens() with a wait due in 1s = %v, want -1", got)
		}
		l.SetRate(ratelimit.Every(2 * time.Second))
		if got := l.Tokens(); got != -1 {
			t.Fatalf("Tokens() after SetRate = %v, want the debt kept: -1", got)
		}
		if at := <-done; at != time.Second {
			t.Fatalf("the wait ended at %v, want its 1s", at)
		}
		// The debt of one token, then one more for this caller: 2 tokens at
		// 2s each from the change.
		if err := l.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		if at := time.Since(start); at != 4*time.Second {
			t.Fatalf("the next wait ended at %v, want 4s", at)
		}
	})
}

// TestStressSetRate changes the rate and the burst under callers of Allow,
// Tokens and Reserve (cancelled at once), under -race: with the clock
// stopped no tokens are made, whatever the changes; while it advances, the
// callers get at most the largest burst plus the fastest rate times the
// time.
func TestStressSetRate(t *testing.T) {
	const workers, calls = 6, 3000
	fake := clock.NewFake()
	start := fake.Now()
	l := ratelimit.New(ratelimit.Every(time.Millisecond), 40, ratelimit.WithClock(fake))
	hammer := func(also func()) int64 {
		var n atomic.Int64
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := range calls {
					switch (w + i) % 4 {
					case 0:
						_ = l.Tokens()
					case 1:
						r := l.Reserve()
						r.Cancel()
					default:
						if l.Allow() {
							n.Add(1)
						}
					}
				}
			})
		}
		wg.Go(func() {
			for i := range 300 {
				l.SetRate(ratelimit.Every(time.Duration(1+i%2) * time.Millisecond))
				l.SetBurst(30 + i%11)
			}
		})
		wg.Go(also)
		waitAll(t, &wg, "the goroutines calling the limiter")
		return n.Load()
	}
	if got := hammer(func() {}); got > 40 {
		t.Fatalf("clock stopped: admitted %d, want at most the burst of 40", got)
	}
	l.SetBurst(40)
	l.SetRate(ratelimit.Every(time.Millisecond))
	if got := l.Tokens(); got > 0 {
		t.Fatalf("clock stopped: %v tokens left after a burst of 40 (some were made)", got)
	}
	got := hammer(func() {
		for range 500 {
			fake.Advance(10 * time.Microsecond)
		}
	})
	elapsed := fake.Now().Sub(start)
	if bound := 40 + int64(elapsed/time.Millisecond); got > bound {
		t.Fatalf("admitted %d in %v, bound %d", got, elapsed, bound)
	}
}

// Keyed.SetRate and SetBurst change every tracked key's bucket, each
// keeping its tokens, and the buckets of keys tracked afterwards.
func TestKeyedSetRateSetBurst(t *testing.T) {
	fake := clock.NewFake()
	k := ratelimit.NewKeyed[string](ratelimit.Every(time.Second), 4, ratelimit.WithClock(fake))
	k.Limiter("a").AllowN(3) // 1 left
	k.Limiter("b").AllowN(1) // 3 left
	held := k.Limiter("a")   // a Limiter taken before the change sees it too
	k.SetRate(ratelimit.Every(100 * time.Millisecond))
	k.SetBurst(2)
	fake.Advance(50 * time.Millisecond)
	type tokens struct{ A, B, C, Held float64 }
	got := tokens{k.Limiter("a").Tokens(), k.Limiter("b").Tokens(), k.Limiter("c").Tokens(), held.Tokens()}
	if diff := cmp.Diff(tokens{1.5, 2, 2, 1.5}, got); diff != "" {
		t.Fatalf("tokens mismatch (-want +got):\n%s", diff)
	}
	for _, key := range []string{"a", "b", "c"} {
		if l := k.Limiter(key); l.Rate() != 10 || l.Burst() != 2 {
			t.Fatalf("key %s: rate %v, burst %d; want 10 and 2", key, l.Rate(), l.Burst())
		}
	}
	func() {
		defer func() {
			if r := recover(); r != "ratelimit: SetRate: Rate must be a number of events per second, got NaN" {
				t.Fatalf("panic %v", r)
			}
		}()
		k.SetRate(math.NaN())
	}()
}

func TestKeyedSetBurstPutsEveryKeyBackOnTheKeyedsRate(t *testing.T) {
	k := ratelimit.NewKeyed[string](1, 4, ratelimit.WithClock(clock.NewFake()))
	k.Limiter("a").SetRate(100) // a's own rate
	k.SetBurst(5)
	if l := k.Limiter("a"); l.Rate() != 1 || l.Burst() != 5 {
		t.Fatalf("key a after Keyed.SetBurst: rate %v, burst %d; want the Keyed's rate 1 and burst 5", l.Rate(), l.Burst())
	}
}

// The entry points that allocated nothing still allocate nothing after a
// change of rate, and Tokens and Cancel allocate nothing.
func TestZeroAllocsAfterSetRate(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), patience)
	defer cancel()
	l := ratelimit.New(1e8, 1<<40)
	l.SetRate(1e9)
	l.SetBurst(1 << 41)
	k := ratelimit.NewKeyed[string](1e9, 1<<40)
	k.Allow("a")
	k.SetRate(1e8)
	r := l.Reserve()
	for name, f := range map[string]func(){
		"Allow":          func() { l.Allow() },
		"AllowN":         func() { l.AllowN(3) },
		"Wait, no wait":  func() { _ = l.Wait(ctx) },
		"Tokens":         func() { _ = l.Tokens() },
		"Keyed.Allow":    func() { k.Allow("a") },
		"Cancel":         func() { r.Cancel() },
		"Delay":          func() { _ = r.Delay() },
		"Reserve not OK": func() { _ = l.ReserveN(1 << 42) },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocs, want 0", name, n)
		}
	}
}

// Regression: SetRate(Off) rounded the tokens down to whole ones (a bucket
// with no refill counted whole tokens only), though the tokens stay: half
// a token refilled before the change is still there after it, and refills
// on when the rate comes back.
func TestSetRateOffKeepsFractionalTokens(t *testing.T) {
	for _, rate := range []float64{ratelimit.Every(time.Second), 3} { // exact units, and units under a nanosecond
		fake := clock.NewFake()
		l := ratelimit.New(rate, 2, ratelimit.WithClock(fake))
		l.AllowN(2)
		fake.Advance(time.Duration(float64(time.Second) / rate / 2)) // half a token
		before := l.Tokens()
		l.SetRate(resilience.Off)
		fake.Advance(time.Hour)
		if got := l.Tokens(); math.Abs(got-0.5) > 1e-6 || got > before {
			t.Errorf("rate %v: Tokens() after SetRate(Off) = %v, want the %v there before", rate, got, before)
		}
		l.SetBurst(4) // a larger bucket, still with no refill: the same tokens
		if got := l.Tokens(); math.Abs(got-0.5) > 1e-6 || got > before {
			t.Errorf("rate %v: Tokens() after SetRate(Off), SetBurst(4) = %v, want the %v there before", rate, got, before)
		}
		l.SetRate(rate)
		fake.Advance(time.Duration(float64(time.Second)/rate/2) + 10) // rounding against the caller: a few ns per change
		if !l.Allow() {
			t.Errorf("rate %v: no token half an interval after the rate came back with half a token", rate)
		}
	}
}

// Regression: SetRate(Off) forgave the tokens a pending reservation owed
// (the bucket went from -1 token to 0), though they carry over as a debt;
// and the debt stays through a later change back to a refilling rate.
func TestSetRateOffCarriesReservationDebt(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 1, ratelimit.WithClock(fake))
	l.Allow()
	if r := l.Reserve(); r.Delay() != time.Second {
		t.Fatalf("Reserve().Delay() = %v, want 1s", r.Delay())
	}
	l.SetRate(resilience.Off)
	if got := l.Tokens(); got != -1 {
		t.Fatalf("Tokens() after SetRate(Off) = %v, want the debt of -1", got)
	}
	if l.Allow() {
		t.Fatal("Allow passed with a debt and no refill")
	}
	l.SetRate(ratelimit.Every(time.Second))
	if got := l.Tokens(); got != -1 {
		t.Fatalf("Tokens() after the rate came back = %v, want the debt of -1", got)
	}
	fake.Advance(time.Second)
	if l.Allow() {
		t.Fatal("Allow passed 1s after a debt of 1 token, with 0 tokens")
	}
	fake.Advance(time.Second)
	if !l.Allow() {
		t.Fatal("Allow refused 2s after a debt of 1 token at 1 a second")
	}
}

// A clock stepped back is not charged as tokens spent (as with
// golang.org/x/time/rate): the limiter's time stands still at the latest
// time it read until the clock passes it. Before, stepping a fake clock
// back an hour took 3600 tokens.
func TestClockSteppedBackIsForgiven(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 2, ratelimit.WithClock(fake))
	fake.Advance(2 * time.Hour)
	l.Allow() // 1 left
	fake.Set(fake.Now().Add(-time.Hour))
	if got := l.Tokens(); got != 1 {
		t.Fatalf("Tokens() after the clock stepped back 1h = %v, want the 1 left", got)
	}
	if !l.Allow() || l.Allow() {
		t.Fatal("want the token left, then none")
	}
	if r := l.Reserve(); r.Delay() != time.Second {
		t.Errorf("Reserve().Delay() after the step back = %v, want 1s", r.Delay())
	}
	// Time stands still until the clock is back where it was: then it
	// refills again.
	fake.Advance(time.Hour)
	if got := l.Tokens(); got != -1 {
		t.Fatalf("Tokens() when the clock is back = %v, want -1 (the reservation's debt)", got)
	}
	fake.Advance(2 * time.Second)
	if got := l.Tokens(); got != 1 {
		t.Fatalf("Tokens() 2s later = %v, want 1", got)
	}
}

// A whole count of tokens survives a change of rate whatever the rates:
// 4 tokens (200ms at 20/s) stay 4 under 21/s, 7/s, and back, as they do
// under rates that divide evenly. Found by a user's review: SetRate(21)
// left 3.99... tokens, read as 3, so a reload to such a rate lost one.
func TestSetRateKeepsWholeTokens(t *testing.T) {
	for _, rates := range [][]float64{{21}, {20}, {10}, {40}, {10, 20}, {21, 20}, {20, 21, 20}, {7}, {33, 3}} {
		fk := clock.NewFake()
		l := ratelimit.New(20, 11, ratelimit.WithClock(fk))
		for l.Allow() {
		}
		fk.Advance(200 * time.Millisecond)
		for _, r := range rates {
			l.SetRate(r)
		}
		n := 0
		for l.Allow() {
			n++
		}
		if n != 4 {
			t.Errorf("rates %v: %d tokens after 200ms at 20/s, want 4", rates, n)
		}
	}
}
