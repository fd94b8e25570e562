package ratelimit_test

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

// A reservation takes its tokens at once, whether they are there or not,
// and says how long to wait; callers after it wait behind it.
func TestReserveDelays(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 2, ratelimit.WithClock(fake))
	type res struct {
		OK    bool
		Delay time.Duration
	}
	of := func(r *ratelimit.Reservation) res { return res{r.OK(), r.Delay()} }
	first, second, third := l.Reserve(), l.Reserve(), l.ReserveN(2)
	got := []res{of(first), of(second), of(third)}
	want := []res{{true, 0}, {true, 0}, {true, 2 * time.Second}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("mismatch (-want +got):\n%s", diff)
	}
	if tk := l.Tokens(); tk != -2 {
		t.Fatalf("Tokens() = %v, want -2 (two taken ahead)", tk)
	}
	if l.Allow() {
		t.Fatal("Allow passed a reservation")
	}
	fake.Advance(1500 * time.Millisecond)
	if d := third.Delay(); d != 500*time.Millisecond {
		t.Fatalf("Delay() 1.5s later = %v, want 500ms", d)
	}
	fake.Advance(time.Second)
	if d := third.Delay(); d != 0 {
		t.Fatalf("Delay() past the time to act = %v, want 0", d)
	}
}

func TestReserveNotOK(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 2, ratelimit.WithClock(fake))
	empty := ratelimit.New(resilience.Off, 1, ratelimit.WithClock(fake))
	empty.Allow()
	for name, r := range map[string]*ratelimit.Reservation{
		"beyond the burst": l.ReserveN(3),
		"no refill":        empty.Reserve(),
	} {
		if r.OK() || r.Delay() != resilience.Never {
			t.Errorf("%s: OK %v, Delay %v; want not OK and Never", name, r.OK(), r.Delay())
		}
		r.Cancel() // does nothing
	}
	if l.Tokens() != 2 || empty.Tokens() != 0 {
		t.Fatalf("a reservation that is not OK took tokens: %v, %v", l.Tokens(), empty.Tokens())
	}
	inf := ratelimit.New(math.Inf(1), 0)
	if r := inf.ReserveN(1000); !r.OK() || r.Delay() != 0 {
		t.Fatalf("at +Inf: OK %v, Delay %v; want OK at once", r.OK(), r.Delay())
	}
	if r := l.ReserveN(0); !r.OK() || r.Delay() != 0 || l.Tokens() != 2 {
		t.Fatalf("ReserveN(0): OK %v, Delay %v, tokens %v", r.OK(), r.Delay(), l.Tokens())
	}
	defer func() {
		if r := recover(); r != "ratelimit: n must be >= 0, got -1" {
			t.Fatalf("ReserveN(-1): panic %v", r)
		}
	}()
	l.ReserveN(-1)
}

// Cancel gives the tokens back when nothing was reserved behind them; the
// tokens that later reservations took ahead stay spent (x/time/rate's
// rule); nothing comes back once the time to act has passed, twice, or
// after a change of rate.
func TestReservationCancel(t *testing.T) {
	cases := []struct {
		name string
		run  func(fake *clock.Fake, l *ratelimit.Limiter) // leaves a state to read Tokens from
		want float64
	}{
		{"alone, before acting", func(fake *clock.Fake, l *ratelimit.Limiter) {
			l.ReserveN(2) // full bucket of 3: 1 left
			r := l.ReserveN(2)
			fake.Advance(500 * time.Millisecond) // 1.5 then; r due at 1s
			r.Cancel()
		}, 1.5},
		{"at once", func(fake *clock.Fake, l *ratelimit.Limiter) {
			r := l.ReserveN(3)
			r.Cancel() // its time to act is now: it has not passed
		}, 3},
		{"behind it, as many", func(fake *clock.Fake, l *ratelimit.Limiter) {
			l.ReserveN(3)
			r := l.ReserveN(2)
			l.ReserveN(2)
			r.Cancel() // the 2 behind took them ahead: nothing comes back
		}, -4},
		{"behind it, fewer", func(fake *clock.Fake, l *ratelimit.Limiter) {
			l.ReserveN(3)
			r := l.ReserveN(3)
			l.ReserveN(1)
			r.Cancel() // 3 less the 1 behind
		}, -2},
		{"twice", func(fake *clock.Fake, l *ratelimit.Limiter) {
			r := l.ReserveN(2)
			r.Cancel()
			r.Cancel()
		}, 3},
		{"twice, with a reservation between", func(fake *clock.Fake, l *ratelimit.Limiter) {
			r := l.ReserveN(2)
			r.Cancel()
			l.ReserveN(2) // takes the tokens r gave back
			r.Cancel()    // does nothing: they are not r's any more
		}, 1},
		{"after acting", func(fake *clock.Fake, l *ratelimit.Limiter) {
			l.ReserveN(3)
			r := l.Reserve() // due at 1s
			fake.Advance(time.Second + time.Nanosecond)
			r.Cancel() // the event happened: only 1ns of refill since
		}, 1e-9},
		{"at the time to act", func(fake *clock.Fake, l *ratelimit.Limiter) {
			l.ReserveN(3)
			r := l.Reserve() // due at 1s
			fake.Advance(time.Second)
			r.Cancel() // not passed yet: comes back
		}, 1},
		{"after SetRate", func(fake *clock.Fake, l *ratelimit.Limiter) {
			r := l.ReserveN(3)
			l.SetRate(ratelimit.Every(time.Second))
			r.Cancel()
		}, 0},
		// Regression: the Allow took the token that was there, at the
		// instant the reservation acts, not one reserved behind it; yet
		// the reservation's 2 tokens stayed spent, though nobody took
		// them (golang.org/x/time/rate gives them back).
		{"with an Allow at the same instant", func(fake *clock.Fake, l *ratelimit.Limiter) {
			r := l.ReserveN(2)
			l.Allow() // 1 left, taken now: it acts when r does
			r.Cancel()
		}, 2},
		{"with a zero-delay reservation at the same instant", func(fake *clock.Fake, l *ratelimit.Limiter) {
			r := l.Reserve()
			l.ReserveN(2) // the 2 left, taken now
			r.Cancel()
		}, 1},
		{"with a zero-delay and a waiting reservation behind it", func(fake *clock.Fake, l *ratelimit.Limiter) {
			r := l.Reserve()
			l.ReserveN(2) // the 2 left, at once
			l.Reserve()   // due at 1s: reckoned with r's token gone
			r.Cancel()
		}, -1},
	}
	for _, c := range cases {
		fake := clock.NewFake()
		l := ratelimit.New(ratelimit.Every(time.Second), 3, ratelimit.WithClock(fake))
		c.run(fake, l)
		if got := l.Tokens(); got != c.want {
			t.Errorf("%s: Tokens() = %v, want %v", c.name, got, c.want)
		}
	}
}

// The bucket bound holds across reservations and cancellations: a newcomer
// after a cancelled reservation never acts at the same time as a
// reservation made behind the cancelled one (the case that made
// x/time/rate keep such tokens spent).
func TestReservationCancelKeepsLaterSchedule(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 1, ratelimit.WithClock(fake))
	l.Reserve()         // acts at 0
	mid := l.Reserve()  // at 1s
	last := l.Reserve() // at 2s
	fake.Advance(500 * time.Millisecond)
	mid.Cancel()
	newcomer := l.Reserve()
	if d1, d2 := last.Delay(), newcomer.Delay(); d2 <= d1 {
		t.Fatalf("newcomer acts in %v, the reservation made before it in %v: both in one interval of a burst of 1", d2, d1)
	}
}

// A reservation's delay counts to the nanosecond: at one event per
// nanosecond, the token after the burst is due 1ns later.
func TestReserveDelayOfOneNanosecond(t *testing.T) {
	l := ratelimit.New(1e9, 1, ratelimit.WithClock(clock.NewFake()))
	if d := l.Reserve().Delay(); d != 0 {
		t.Errorf("first Reserve: Delay() = %v, want 0", d)
	}
	if d := l.Reserve().Delay(); d != time.Nanosecond {
		t.Errorf("second Reserve: Delay() = %v, want 1ns", d)
	}
}

// A reservation that takes the whole burst of a full bucket, at a rate
// whose interval is not a whole number of nanoseconds and at an instant
// that falls between two units, may act at once: cancelled at once, it
// gives its tokens back.
func TestReserveTheWholeBurstAtAFractionalInstant(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(3, 2, ratelimit.WithClock(fake)) // an interval of 333333333.3ns
	fake.Advance(time.Nanosecond)
	r := l.ReserveN(2)
	if !r.OK() || r.Delay() != 0 {
		t.Fatalf("ReserveN(2) on a full bucket: OK %v, Delay %v; want OK at once", r.OK(), r.Delay())
	}
	r.Cancel()
	if got := l.Tokens(); got < 1.99 {
		t.Errorf("Tokens() after Cancel = %v, want the 2 tokens back (to within a unit)", got)
	}
}
