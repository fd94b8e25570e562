package ratelimit_test

import (
	"context"
	"errors"
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

func TestBurstThenRefill(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(100*time.Millisecond), 3, ratelimit.WithClock(fake))
	var got []bool
	step := func(d time.Duration) {
		fake.Advance(d)
		got = append(got, l.Allow())
	}
	for range 4 {
		step(0) // the full bucket: 3 pass, the 4th is refused
	}
	step(99 * time.Millisecond)  // not yet a token
	step(time.Millisecond)       // one token back
	step(0)                      // spent
	step(250 * time.Millisecond) // two tokens and a half
	step(0)                      //
	step(0)                      //
	step(50 * time.Millisecond)  // the half became a third
	step(time.Hour)              // full again: 3
	step(0)                      //
	step(0)                      //
	step(0)                      // but no more than 3
	want := []bool{true, true, true, false, false, true, false, true, true, false, true, true, true, true, false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("mismatch (-want +got):\n%s", diff)
	}
}

func TestAllowN(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(10, 5, ratelimit.WithClock(fake))
	tests := []struct {
		advance time.Duration
		n       int
		want    bool
	}{
		{0, 6, false}, // more than the burst: never
		{0, 3, true},
		{0, 3, false}, // all or none: 2 are left
		{0, 2, true},
		{0, 0, true}, // nothing asked, nothing taken
		{200 * time.Millisecond, 2, true},
		{0, 1, false},
	}
	for i, tt := range tests {
		fake.Advance(tt.advance)
		if got := l.AllowN(tt.n); got != tt.want {
			t.Fatalf("step %d: AllowN(%d) = %v, want %v", i, tt.n, got, tt.want)
		}
	}
	defer func() {
		if r := recover(); r != "ratelimit: n must be >= 0, got -1" {
			t.Fatalf("AllowN(-1) panicked with %v", r)
		}
	}()
	l.AllowN(-1)
}

// AllowN(0) asks for nothing: it passes and takes nothing, also while
// reservations have taken tokens ahead (the bucket is in debt).
func TestAllowNothingInDebt(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 1, ratelimit.WithClock(fake))
	l.Allow()
	l.Reserve()
	if !l.AllowN(0) {
		t.Error("AllowN(0) refused in debt")
	}
	if got := l.Stats().Refused; got != 0 {
		t.Errorf("Stats().Refused = %d after AllowN(0), want 0", got)
	}
	if got := l.Tokens(); got != -1 {
		t.Errorf("Tokens() = %v after AllowN(0), want the debt of -1", got)
	}
}

func TestInfiniteRateAdmitsEverything(t *testing.T) {
	l := ratelimit.New(math.Inf(1), 0)
	for _, n := range []int{1, 1 << 40, 0} {
		if !l.AllowN(n) {
			t.Fatalf("AllowN(%d) refused", n)
		}
	}
	if !l.Allow() {
		t.Fatal("infinite rate refused")
	}
	if err := returns(t, "Wait at an infinite rate", func() error { return l.Wait(t.Context()) }); err != nil {
		t.Fatalf("Wait at an infinite rate = %v", err)
	}
	if err := returns(t, "WaitN(1<<50) at an infinite rate", func() error { return l.WaitN(t.Context(), 1<<50) }); err != nil {
		t.Fatalf("WaitN(1<<50) at an infinite rate = %v", err)
	}
}

func TestZeroRateGivesTheBurstOnly(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(resilience.Off, 2, ratelimit.WithClock(fake), ratelimit.WithName("once"))
	if got := admitted(l, 5); got != 2 {
		t.Fatalf("admitted %d, want 2", got)
	}
	fake.Advance(1000 * time.Hour)
	if l.Allow() {
		t.Fatal("refilled")
	}
	err := returns(t, "Wait on a bucket that never refills", func() error { return l.Wait(t.Context()) })
	if err == nil || err.Error() != "ratelimit: limited (once), retry never" {
		t.Fatalf("Wait = %v, want a refusal with no retry", err)
	}
	if d, _ := resilience.RetryAfter(err); d != time.Duration(math.MaxInt64) {
		t.Fatalf("RetryAfter = %v, want math.MaxInt64", d)
	}
}

// A rate whose interval is not a whole number of nanoseconds: 3 per
// second, one token every 333333333⅓ns. Taking each token as soon as it is
// admitted, from an empty bucket of 2, the k-th token is never admitted
// before k·10⁹/3 ns and at most 2ns after: the rounding does not drift.
func TestNonIntegerIntervalDoesNotDrift(t *testing.T) {
	fake := clock.NewFake()
	start := fake.Now()
	l := ratelimit.New(3, 2, ratelimit.WithClock(fake))
	if !l.AllowN(2) {
		t.Fatal("burst refused")
	}
	var late time.Duration
	for k := int64(1); k <= 3000; k++ {
		due := time.Duration((k*1e9 + 2) / 3) // ceil(k·1e9/3)
		fake.Set(start.Add(due - 1))
		if l.Allow() {
			t.Fatalf("token %d admitted at %v, before it was due at %v", k, due-1, due)
		}
		at := due
		for fake.Set(start.Add(at)); !l.Allow(); fake.Set(start.Add(at)) {
			if at++; at > due+2 {
				t.Fatalf("token %d due at %v still refused at %v", k, due, at)
			}
		}
		late = max(late, at-due)
	}
	t.Logf("latest admission: %v after due", late)
}

// Every(d) spaces events exactly d apart, also for the intervals whose rate,
// 1e9/d, does not give d back exactly in floating point (29ns gives
// 29.000000000000004, 55ns 54.99999999999999): a token taken from a full
// bucket is followed by the next one d later, not a nanosecond more or less.
func TestEveryIsExact(t *testing.T) {
	for _, d := range []time.Duration{1, 7, 29, 55, 57, 58, 110, time.Second} {
		fake := clock.NewFake()
		l := ratelimit.New(ratelimit.Every(d), 1, ratelimit.WithClock(fake))
		fake.Advance(12345 * time.Nanosecond) // not on the origin
		if !l.Allow() {
			t.Fatalf("Every(%v): the first token refused", d)
		}
		fake.Advance(d - 1)
		if l.Allow() || l.AllowN(1) {
			t.Errorf("Every(%v): the next token admitted %v after the first", d, d-1)
			continue
		}
		fake.Advance(1)
		if !l.Allow() {
			t.Errorf("Every(%v): the next token refused %v after the first", d, d)
		}
	}
}

// One per nanosecond, also from a Rate whose interval is off a whole
// nanosecond by 2^-50 relative, the most Config.Rate takes as exactly that
// interval: 9.999999999999992e8 gives an interval of 1.0000000000000009ns.
func TestOnePerNanosecond(t *testing.T) {
	for _, rate := range []float64{1e9, 9.999999999999992e8} {
		fake := clock.NewFake()
		l := ratelimit.New(rate, 1, ratelimit.WithClock(fake))
		for i := range 100 {
			if !l.Allow() || l.Allow() {
				t.Fatalf("rate %v, ns %d: want exactly one admitted", rate, i)
			}
			fake.Advance(time.Nanosecond)
		}
	}
}

// A tiny rate with a large burst: tau would exceed the limiter's range in
// nanoseconds, so its unit of time grows; it still keeps the rate.
func TestTinyRateLargeBurst(t *testing.T) {
	fake := clock.NewFake()
	const perYear = 1 / (365.25 * 24 * 3600)
	l := ratelimit.New(perYear, 1000, ratelimit.WithClock(fake))
	if got := admitted(l, 2000); got != 1000 {
		t.Fatalf("admitted %d, want 1000", got)
	}
	fake.Advance(364 * 24 * time.Hour)
	if l.Allow() {
		t.Fatal("admitted before a year")
	}
	fake.Advance(36 * time.Hour)
	if !l.Allow() || l.Allow() {
		t.Fatal("want exactly one after a year")
	}
}

// Time running backwards, even to before the limiter was made, never
// admits more.
func TestClockGoingBack(t *testing.T) {
	for _, perSecond := range []float64{1, 3} { // exact and rounded units
		for _, age := range []time.Duration{time.Second, time.Hour} {
			fake := clock.NewFake()
			l := ratelimit.New(perSecond, 2, ratelimit.WithClock(fake))
			fake.Advance(age)
			if !l.AllowN(2) || l.Allow() {
				t.Fatalf("rate %v: want exactly the burst of 2", perSecond)
			}
			for _, back := range []time.Duration{time.Millisecond, age, age + time.Second, 1000 * time.Hour} {
				fake.Set(fake.Now().Add(-back))
				if l.Allow() {
					t.Fatalf("rate %v, age %v: admitted after the clock went back %v", perSecond, age, back)
				}
			}
		}
	}
}

// After 73 years the limiter's clock stops: the bucket gives what it holds
// and no longer refills; nothing overflows, even at a rate whose unit is
// under a nanosecond.
func TestEndOfTime(t *testing.T) {
	const year = 365 * 24 * time.Hour
	for _, perSecond := range []float64{1e9, 1e9 / 1.5} {
		fake := clock.NewFake()
		l := ratelimit.New(perSecond, 5, ratelimit.WithClock(fake))
		fake.Advance(280 * year)
		if !l.AllowN(5) || l.Allow() {
			t.Fatalf("rate %v: want exactly the burst of 5", perSecond)
		}
		fake.Advance(year)
		if l.Allow() {
			t.Fatalf("rate %v: refilled after the end of time", perSecond)
		}
	}
}

// The default clock reads the runtime's monotonic time; synctest's bubble
// makes it virtual.
func TestDefaultClock(t *testing.T) {
	bubble(t, func(t *testing.T) {
		l := ratelimit.New(ratelimit.Every(time.Second), 1)
		if !l.Allow() || l.Allow() {
			t.Fatal("want one token")
		}
		time.Sleep(999 * time.Millisecond)
		if l.Allow() {
			t.Fatal("admitted early")
		}
		time.Sleep(time.Millisecond)
		if !l.Allow() {
			t.Fatal("refused after 1s")
		}
		clocked := ratelimit.New(ratelimit.Every(time.Second), 1, ratelimit.WithClock(clock.Real()))
		if !clocked.Allow() || clocked.Allow() {
			t.Fatal("want one token")
		}
		time.Sleep(time.Second)
		if !clocked.Allow() {
			t.Fatal("refused after 1s")
		}
	})
}

func TestWait(t *testing.T) {
	bubble(t, func(t *testing.T) {
		l := ratelimit.New(ratelimit.Every(time.Second), 2)
		start := time.Now()
		var at []time.Duration
		for range 4 {
			if err := l.Wait(t.Context()); err != nil {
				t.Fatal(err)
			}
			at = append(at, time.Since(start))
		}
		if diff := cmp.Diff([]time.Duration{0, 0, time.Second, 2 * time.Second}, at); diff != "" {
			t.Fatalf("admission times mismatch (-want +got):\n%s", diff)
		}
		if err := l.WaitN(t.Context(), 2); err != nil || time.Since(start) != 4*time.Second {
			t.Fatalf("WaitN(2) = %v at %v, want nil at 4s", err, time.Since(start))
		}
	})
}

func TestWaitFailsAtOnceBeyondDeadline(t *testing.T) {
	bubble(t, func(t *testing.T) {
		l := ratelimit.New(ratelimit.Every(time.Second), 1, ratelimit.WithName("api"))
		_ = l.Allow()
		ctx, cancel := context.WithTimeout(t.Context(), 999*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := l.Wait(ctx)
		if time.Since(start) != 0 {
			t.Fatalf("Wait slept %v before failing", time.Since(start))
		}
		checkLimited(t, err, "api", time.Second)

		// With a deadline just long enough, it waits.
		ctx, cancel = context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := l.Wait(ctx); err != nil || time.Since(start) != time.Second {
			t.Fatalf("Wait = %v after %v, want nil after 1s", err, time.Since(start))
		}
	})
}

// A refusal's RetryAfter is the wait until the token is there: Allow passes
// after it and not a nanosecond before, also for intervals that are not a
// whole number of nanoseconds.
func TestRefusalHintIsTheWaitForTheToken(t *testing.T) {
	for _, rate := range []float64{3, 3e7, ratelimit.Every(29), ratelimit.Every(time.Second)} {
		fake := clock.NewFake()
		l := ratelimit.New(rate, 1, ratelimit.WithClock(fake), ratelimit.WithMaxWait(time.Nanosecond))
		if !l.Allow() {
			t.Fatalf("rate %v: the first token refused", rate)
		}
		for i := range 50 {
			err := returns(t, "a Wait longer than MaxWait", func() error { return l.Wait(t.Context()) })
			hint, ok := resilience.RetryAfter(err)
			if !errors.Is(err, ratelimit.ErrLimited) || !ok || hint <= 0 {
				t.Fatalf("rate %v, step %d: Wait = %v, want ErrLimited with a hint", rate, i, err)
			}
			fake.Advance(hint - 1)
			if l.Allow() {
				t.Fatalf("rate %v, step %d: the token admitted %v after the hint %v", rate, i, hint-1, hint)
			}
			fake.Advance(1)
			if !l.Allow() {
				t.Fatalf("rate %v, step %d: the token refused after the hint %v", rate, i, hint)
			}
			fake.Advance(time.Duration(i % 20)) // vary the phase, leaving a wait of more than MaxWait
		}
	}
}

func TestWaitFailsAtOnceBeyondMaxWait(t *testing.T) {
	bubble(t, func(t *testing.T) {
		l := ratelimit.New(ratelimit.Every(time.Second), 1, ratelimit.WithMaxWait(500*time.Millisecond))
		_ = l.Allow()
		time.Sleep(400 * time.Millisecond)
		start := time.Now()
		checkLimited(t, l.Wait(t.Context()), "", 600*time.Millisecond)
		if time.Since(start) != 0 {
			t.Fatal("Wait slept before failing")
		}
		time.Sleep(100 * time.Millisecond)
		if err := l.Wait(t.Context()); err != nil || time.Since(start) != 600*time.Millisecond {
			t.Fatalf("Wait = %v after %v, want nil after 600ms", err, time.Since(start))
		}
	})
}

// Regression: WithMaxWait(math.MaxInt64), "no cap", made Wait refuse
// even short waits: the end of the wait, now + MaxWait, overflowed.
func TestWaitMaxWaitLargestDuration(t *testing.T) {
	for _, rate := range []float64{3, 7, 0.7} {
		bubble(t, func(t *testing.T) {
			l := ratelimit.New(rate, 1, ratelimit.WithMaxWait(math.MaxInt64))
			_ = l.Allow()
			time.Sleep(17*time.Minute + 3) // some time since the origin
			_ = l.Allow()
			start := time.Now()
			if err := l.Wait(t.Context()); err != nil {
				t.Errorf("rate %v: Wait = %v, want nil", rate, err)
			}
			// The next token is at most one interval away (2ns of rounding).
			if got, T := time.Since(start), time.Duration(1e9/rate); got > T+2 {
				t.Errorf("rate %v: waited %v, want at most %v", rate, got, T)
			}
			// With a deadline too, the shorter bound applies.
			ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
			defer cancel()
			if err := l.Wait(ctx); !errors.Is(err, ratelimit.ErrLimited) {
				t.Errorf("rate %v: Wait with a 1ms deadline = %v, want ErrLimited", rate, err)
			}
		})
	}
}

// Regression: WaitN with n above the burst returned an untyped error, which
// a caller could tell apart only by its message. No wait helps, so it must
// not match ErrLimited (whose RetryAfter invites a retry).
func TestWaitNBeyondBurstMatchesErrExceedsBurst(t *testing.T) {
	for _, name := range []string{"", "api"} {
		l := ratelimit.New(1, 3, ratelimit.WithName(name), ratelimit.WithClock(clock.NewFake()))
		err := returns(t, "WaitN beyond the burst", func() error { return l.WaitN(t.Context(), 4) })
		if !errors.Is(err, ratelimit.ErrExceedsBurst) || errors.Is(err, ratelimit.ErrLimited) || errors.Is(err, resilience.ErrRefused) {
			t.Errorf("name %q: WaitN(4) with burst 3 = %v; want ErrExceedsBurst, not ErrLimited nor ErrRefused", name, err)
		}
		if !l.AllowN(3) {
			t.Errorf("name %q: the refused WaitN took tokens", name)
		}
	}
}

func checkLimited(t *testing.T, err error, name string, wait time.Duration) {
	t.Helper()
	if !errors.Is(err, ratelimit.ErrLimited) || !errors.Is(err, resilience.ErrRefused) {
		t.Fatalf("err = %v, want ErrLimited and ErrRefused", err)
	}
	var re *resilience.RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("err = %T, want *resilience.RefusedError", err)
	}
	if diff := cmp.Diff([]any{name, wait}, []any{re.Name(), re.RetryAfter()}); diff != "" {
		t.Fatalf("refusal's name and RetryAfter mismatch (-want +got):\n%s", diff)
	}
	if d, ok := resilience.RetryAfter(err); !ok || d != wait {
		t.Fatalf("RetryAfter = %v, %v, want %v", d, ok, wait)
	}
}

func TestWaitErrors(t *testing.T) {
	l := ratelimit.New(1, 3, ratelimit.WithName("api"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := returns(t, "Wait(done ctx)", func() error { return l.Wait(ctx) }); err != context.Canceled {
		t.Fatalf("Wait(done ctx) = %v, want context.Canceled", err)
	}
	if err := returns(t, "WaitN(done ctx, 0)", func() error { return l.WaitN(ctx, 0) }); err != context.Canceled {
		t.Fatalf("WaitN(done ctx, 0) = %v, want context.Canceled", err)
	}
	if !l.AllowN(3) {
		t.Fatal("a done ctx took tokens")
	}
	err := returns(t, "WaitN beyond the burst", func() error { return l.WaitN(t.Context(), 4) })
	if err == nil || err.Error() != "ratelimit: events exceed the burst (api): 4 asked, burst 3" || errors.Is(err, ratelimit.ErrLimited) {
		t.Fatalf("WaitN beyond burst = %v", err)
	}
	// A negative n panics, whatever the context.
	for _, c := range []context.Context{t.Context(), ctx} {
		func() {
			defer func() {
				if r := recover(); r != "ratelimit: n must be >= 0, got -2" {
					t.Fatalf("WaitN(-2) panicked with %v", r)
				}
			}()
			_ = l.WaitN(c, -2)
		}()
	}
}

func TestWaitCancelledGivesTokensBack(t *testing.T) {
	bubble(t, func(t *testing.T) {
		l := ratelimit.New(ratelimit.Every(time.Second), 1)
		_ = l.Allow()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- l.Wait(ctx) }()
		synctest.Wait() // waiting for the token due at 1s
		cancel()
		if err := <-done; err != context.Canceled {
			t.Fatalf("Wait = %v, want context.Canceled", err)
		}
		time.Sleep(time.Second)
		if !l.Allow() {
			t.Fatal("the cancelled wait kept its token")
		}
	})
}

// A cancelled wait with another reserved behind it keeps its tokens spent:
// giving them back would let a newcomer in ahead of the later reservation.
// The same at one token a nanosecond, where a token is one unit of the
// limiter's time: the cancelled wait gives that unit back too.
func TestWaitCancelledGivesBackASingleUnit(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := clock.NewFake()
		l := ratelimit.New(ratelimit.Every(time.Nanosecond), 1, ratelimit.WithClock(fake))
		_ = l.Allow()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- l.Wait(ctx) }()
		synctest.Wait() // waiting for the token due in 1ns
		if got := l.Tokens(); got != -1 {
			t.Fatalf("Tokens() = %v while waiting, want -1", got)
		}
		cancel()
		if err := <-done; err != context.Canceled {
			t.Fatalf("Wait = %v, want context.Canceled", err)
		}
		if got := l.Tokens(); got != 0 {
			t.Fatalf("Tokens() = %v after the cancelled wait, want 0: the token given back", got)
		}
	})
}

// A deadline that has passed on the limiter's clock (a fake one: the context
// itself is not done) leaves no time to wait: a wait of even 1ns is refused
// at once, with that wait as the hint.
func TestWaitDeadlinePassedOnTheLimitersClock(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := clock.NewFake()
		l := ratelimit.New(ratelimit.Every(time.Second), 1, ratelimit.WithClock(fake))
		_ = l.Allow()
		fake.Advance(time.Second - 1)
		live, cancel := context.WithCancel(t.Context())
		defer cancel()
		ctx := deadlineCtx{live, fake.Now()}
		done := make(chan error, 1)
		go func() { done <- l.Wait(ctx) }()
		synctest.Wait()
		select {
		case err := <-done:
			if hint, _ := resilience.RetryAfter(err); !errors.Is(err, ratelimit.ErrLimited) || hint != 1 {
				t.Fatalf("Wait = %v (hint %v), want ErrLimited with a hint of 1ns", err, hint)
			}
		default:
			cancel()
			t.Fatalf("Wait is waiting past a deadline on the limiter's clock: %v", <-done)
		}
	})
}

// deadlineCtx gives a live context a deadline on a fake clock.
type deadlineCtx struct {
	context.Context
	d time.Time
}

func (c deadlineCtx) Deadline() (time.Time, bool) { return c.d, true }

func TestWaitCancelledBehindAnotherKeepsTokens(t *testing.T) {
	bubble(t, func(t *testing.T) {
		l := ratelimit.New(ratelimit.Every(time.Second), 1)
		start := time.Now()
		_ = l.Allow()
		ctx, cancel := context.WithCancel(t.Context())
		first := make(chan error)
		go func() { first <- l.Wait(ctx) }() // due at 1s
		synctest.Wait()
		second := make(chan time.Duration)
		go func() { _ = l.Wait(t.Context()); second <- time.Since(start) }() // due at 2s
		synctest.Wait()
		cancel()
		<-first
		time.Sleep(time.Second)
		if l.Allow() {
			t.Fatal("admitted at 1s, ahead of the wait due at 2s")
		}
		if at := <-second; at != 2*time.Second {
			t.Fatalf("second wait ended at %v, want 2s", at)
		}
		if l.Allow() {
			t.Fatal("admitted at 2s beside the wait due at 2s")
		}
	})
}

func TestLimitedErrorMessages(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{ratelimit.ErrLimited, "ratelimit: limited"},
		{resilience.Refuse(ratelimit.ErrLimited, "", time.Second), "ratelimit: limited, retry after 1s"},
		{resilience.Refuse(ratelimit.ErrLimited, "api", 250*time.Millisecond), "ratelimit: limited (api), retry after 250ms"},
		{resilience.Refuse(ratelimit.ErrLimited, "api", resilience.Never), "ratelimit: limited (api), retry never"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		if !errors.Is(tt.err, ratelimit.ErrLimited) || !errors.Is(tt.err, resilience.ErrRefused) {
			t.Errorf("%q does not match ErrLimited and ErrRefused", tt.want)
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	// The deadline bounds a Wait that would wait (it fails at once if the
	// wait would pass it).
	ctx, cancel := context.WithTimeout(t.Context(), patience)
	defer cancel()
	l := ratelimit.New(1e9, 1<<40)
	fake := ratelimit.New(1e9, 1<<40, ratelimit.WithClock(clock.NewFake()))
	p := ratelimit.Policy[int](l)
	wp := ratelimit.WaitPolicy[int](l)
	k := ratelimit.NewKeyed[string](1e9, 1<<40)
	empty := ratelimit.New(resilience.Off, 1)
	empty.Allow()
	op := func(context.Context) (int, error) { return 1, nil }
	for name, f := range map[string]func(){
		"Allow":                 func() { l.Allow() },
		"Allow, fake clock":     func() { fake.Allow() },
		"AllowN":                func() { l.AllowN(3) },
		"Wait, no wait":         func() { _ = l.Wait(ctx) },
		"Policy.Do":             func() { _, _ = p.Do(ctx, op) },
		"WaitPolicy.Do":         func() { _, _ = wp.Do(ctx, op) },
		"Keyed.Allow, tracked":  func() { k.Allow("a") },
		"AllowN, beyond burst":  func() { fake.AllowN(1 << 41) },
		"Allow, no tokens left": func() { empty.Allow() },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocs, want 0", name, n)
		}
	}
}

// TestStressNoOverAdmission hammers one limiter from many goroutines, under
// -race: with its fake clock stopped they get exactly the burst; while the
// clock advances, admitted <= burst + rate·elapsed.
func TestStressNoOverAdmission(t *testing.T) {
	const burst, workers, calls = 50, 8, 2000
	fake := clock.NewFake()
	start := fake.Now()
	l := ratelimit.New(ratelimit.Every(time.Millisecond), burst, ratelimit.WithClock(fake))
	hammer := func(also func()) int64 {
		var n atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for range calls {
					if l.Allow() {
						n.Add(1)
					}
				}
			})
		}
		wg.Go(also)
		waitAll(t, &wg, "the goroutines calling Allow")
		return n.Load()
	}
	if got := hammer(func() {}); got != burst {
		t.Fatalf("clock stopped: admitted %d, want exactly %d", got, burst)
	}
	got := hammer(func() {
		for range 500 {
			fake.Advance(10 * time.Microsecond)
		}
	})
	elapsed := fake.Now().Sub(start)
	if bound := int64(elapsed / time.Millisecond); got > bound {
		t.Fatalf("admitted %d in %v after the burst, bound %d", got, elapsed, bound)
	}
}

// TestLatenessBound pins the documented precision: an event never passes
// before the exact bucket would let it, and at most 2ns after, or, when
// Burst·⌈1/Rate⌉ exceeds 2^61 ns, at most 2 units of T/⌊2^61/Burst⌋ after
// (the package documentation used to claim 2ns for every configuration).
func TestLatenessBound(t *testing.T) {
	const perYear = 1 / (365.25 * 24 * 3600)
	for _, c := range []struct {
		rate  float64
		burst int
	}{{3, 5}, {0.7, 3}, {1e9 / 3, 2}, {1e9 / 2.9, 2}, {1, 1 << 52}, {1e-6, 1 << 40}, {perYear, 1000}} {
		T := 1e9 / c.rate // ns, exact
		bound := 2.0
		if math.Ceil(T)*float64(c.burst) > 1<<61 {
			bound = 2 * T / math.Floor((1<<61)/float64(c.burst))
		}
		for _, phase := range []time.Duration{0, 1, 3, 12345, 17*time.Minute + 3, 1000 * time.Hour} {
			// The first time after draining the bucket at phase that one
			// more event passes, found by bisection over fresh limiters.
			probe := func(d time.Duration) bool {
				fake := clock.NewFake()
				l := ratelimit.New(c.rate, c.burst, ratelimit.WithClock(fake))
				fake.Advance(phase)
				if !l.AllowN(c.burst) {
					t.Fatalf("rate %v, burst %d: could not take the burst", c.rate, c.burst)
				}
				fake.Advance(d)
				return l.Allow()
			}
			lo, hi := time.Duration(0), time.Duration(2*T)
			for lo < hi {
				if mid := lo + (hi-lo)/2; probe(mid) {
					hi = mid
				} else {
					lo = mid + 1
				}
			}
			if late := float64(lo) - T; late < 0 || late > bound {
				t.Errorf("rate %v, burst %d, phase %v: next event passes %v after draining, %.0fns after the exact bucket's; want within [0, %.0fns]",
					c.rate, c.burst, phase, lo, late, bound)
			}
		}
	}
}

// A cancelled wait with fewer tokens reserved behind it than it took gives
// back the rest, as Reservation.Cancel does (x/time/rate's rule).
func TestWaitCancelledBehindFewerGivesBackTheRest(t *testing.T) {
	bubble(t, func(t *testing.T) {
		l := ratelimit.New(ratelimit.Every(time.Second), 2)
		start := time.Now()
		_ = l.AllowN(2)
		ctx, cancel := context.WithCancel(t.Context())
		first := make(chan error)
		go func() { first <- l.WaitN(ctx, 2) }() // due at 2s
		synctest.Wait()
		second := make(chan time.Duration)
		go func() { _ = l.Wait(t.Context()); second <- time.Since(start) }() // due at 3s
		synctest.Wait()
		if got := l.Tokens(); got != -3 {
			t.Fatalf("Tokens() = %v, want -3", got)
		}
		cancel()
		if err := <-first; err != context.Canceled {
			t.Fatalf("WaitN = %v, want context.Canceled", err)
		}
		if got := l.Tokens(); got != -2 {
			t.Fatalf("Tokens() after the cancelled wait = %v, want -2 (2 given back less the 1 behind)", got)
		}
		if at := <-second; at != 3*time.Second {
			t.Fatalf("second wait ended at %v, want 3s", at)
		}
	})
}
