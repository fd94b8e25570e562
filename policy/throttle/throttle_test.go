package throttle_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/throttle"
)

// never is a Random that never lets a request be refused (1 is above
// every probability): the counts move, the decisions do not.
func never() float64 { return 1 }

// always is a Random that refuses every request whose probability is
// above 0.
func always() float64 { return 0 }

// send makes n requests through th that end with err, one after the
// other; it returns how many were refused.
func send(th *throttle.Throttler, n int, err error) (refused int) {
	for range n {
		p, aerr := th.Allow()
		if aerr != nil {
			refused++
			continue
		}
		p.Done(err)
	}
	return refused
}

func TestSucceedingCallsAreNeverRefused(t *testing.T) {
	fake := clock.NewFake()
	th := throttle.New(throttle.WithClock(fake), throttle.WithRandom(always))
	for range 100 {
		if n := send(th, 50, nil); n != 0 {
			t.Fatalf("%d of 50 succeeding calls refused", n)
		}
		fake.Advance(3 * time.Second)
	}
	if s := th.Stats(); s.Probability != 0 || s.Refused != 0 || s.Requests != s.Accepts {
		t.Fatalf("Stats %+v, want probability 0, nothing refused, every request accepted", s)
	}
}

// The probability is the SRE book's, over the window's counts.
func TestProbabilityIsTheFormula(t *testing.T) {
	for _, k := range []float64{1, 1.5, 2, 3} {
		for _, tt := range []struct{ ok, failed int }{{10, 0}, {0, 10}, {10, 10}, {10, 30}, {100, 150}, {1, 1000}} {
			fake := clock.NewFake()
			th := throttle.New(throttle.WithClock(fake), throttle.WithK(k), throttle.WithRandom(never))
			send(th, tt.ok, nil)
			send(th, tt.failed, errors.New("503"))
			r, a := float64(tt.ok+tt.failed), float64(tt.ok)
			want := math.Max(0, (r-k*a)/(r+1))
			if got := th.Stats().Probability; math.Abs(got-want) > 1e-12 {
				t.Errorf("K %v, %d accepted, %d failed: probability %v, want %v", k, tt.ok, tt.failed, got, want)
			}
			if got := th.Stats().Probability; got < 0 || got >= 1 {
				t.Errorf("K %v, %d accepted, %d failed: probability %v out of [0, 1)", k, tt.ok, tt.failed, got)
			}
		}
	}
}

// A refused request counts neither as a request nor as an accept (a
// throttler that counted it as a request, or as a failure, would keep its
// own refusals in the window and refuse on after the dependency
// recovered: go-zero PR 5551; TestRecoveryAfterAnOutage).
func TestOwnRefusalsAreNotCounted(t *testing.T) {
	draws := 0
	th := throttle.New(throttle.WithClock(clock.NewFake()), throttle.WithRandom(func() float64 {
		draws++
		return 0
	}))
	send(th, 10, errors.New("503")) // the first is sent (probability 0), then all are refused
	s := th.Stats()
	if s.Refused != 9 || s.Requests != 1 || s.Accepts != 0 || s.Probability != 0.5 {
		t.Fatalf("10 requests to a failing dependency, refusing whenever it may: Stats %+v, want 9 refused, 1 request, 0 accepts, probability 1/2", s)
	}
	if draws != 9 {
		t.Fatalf("Random drawn %d times, want 9: only when the probability is above 0", draws)
	}
}

func TestOutcomes(t *testing.T) {
	for _, tt := range []struct {
		err                error
		requests, accepted int64
	}{
		{nil, 1, 1},
		{resilience.Permanent(errors.New("404")), 1, 1},
		{errors.New("503"), 1, 0},
		{context.DeadlineExceeded, 1, 0},
		{fmt.Errorf("get: %w", context.Canceled), 0, 0},
		{resilience.Refuse(throttle.ErrThrottled, "inner", -1), 0, 0},
	} {
		th := throttle.New(throttle.WithClock(clock.NewFake()))
		send(th, 1, tt.err)
		if s := th.Stats(); s.Requests != tt.requests || s.Accepts != tt.accepted {
			t.Errorf("Done(%v): %d requests, %d accepted; want %d and %d", tt.err, s.Requests, s.Accepts, tt.requests, tt.accepted)
		}
	}
}

// Requests in flight count against the dependency only from the end of
// their bucket on: a burst of new calls does not throttle itself, calls
// that hang do.
func TestRequestsInFlight(t *testing.T) {
	fake := clock.NewFake()
	th := throttle.New(throttle.WithClock(fake), throttle.WithWindow(16*time.Second), throttle.WithRandom(never))
	ps := make([]throttle.Permit, 100)
	for i := range ps {
		var err error
		if ps[i], err = th.Allow(); err != nil {
			t.Fatal(err)
		}
	}
	if s := th.Stats(); s.Probability != 0 || s.Requests != 100 {
		t.Fatalf("100 calls in flight in the current bucket: Stats %+v, want 100 requests and probability 0", s)
	}
	fake.Advance(time.Second) // the bucket ends; the calls hang on
	if s := th.Stats(); math.Abs(s.Probability-100.0/101) > 1e-12 {
		t.Fatalf("100 calls in flight from the last bucket: probability %v, want 100/101", s.Probability)
	}
	for i := range ps {
		ps[i].Done(nil)
	}
	// Ended in a bucket that has been turned: counted at once.
	if s := th.Stats(); s.Probability != 0 || s.Accepts != 100 {
		t.Fatalf("the 100 calls ended well: Stats %+v, want 100 accepts and probability 0", s)
	}
}

// Failures leave the window after Window (to within a bucket), and with
// them the refusals.
func TestWindowSlides(t *testing.T) {
	fake := clock.NewFake()
	th := throttle.New(throttle.WithClock(fake), throttle.WithWindow(16*time.Second), throttle.WithRandom(never))
	send(th, 20, errors.New("503"))
	for i := 1; i <= 17; i++ {
		fake.Advance(time.Second)
		send(th, 1, nil) // keeps the buckets turning
		p := th.Stats().Probability
		if i < 16 && p == 0 || i >= 16 && p != 0 {
			t.Fatalf("%ds after 20 failures (window 16s): probability %v", i, p)
		}
	}
}

// The buckets turn on a timer of the throttler's clock, which stops after
// a bucket without requests and starts again with the next request; the
// counts survive the pause.
func TestTimerStopsWhenIdle(t *testing.T) {
	fake := clock.NewFake()
	th := throttle.New(throttle.WithClock(fake), throttle.WithWindow(16*time.Second), throttle.WithRandom(never))
	if n := fake.Waiters(); n != 0 {
		t.Fatalf("a new throttler arms %d timers, want 0", n)
	}
	send(th, 10, errors.New("503"))
	if n := fake.Waiters(); n != 1 {
		t.Fatalf("after requests: %d timers, want 1", n)
	}
	fake.Advance(time.Second) // a bucket with requests ends: it goes on
	if n := fake.Waiters(); n != 1 {
		t.Fatalf("after a bucket with requests: %d timers, want 1", n)
	}
	fake.Advance(time.Second) // a bucket without: it stops
	if n := fake.Waiters(); n != 0 {
		t.Fatalf("after a bucket without requests: %d timers, want 0", n)
	}
	fake.Advance(5 * time.Second)
	want := 10.0 / 11
	if p := th.Stats().Probability; math.Abs(p-want) > 1e-12 {
		t.Fatalf("idle, 7s after 10 failures: probability %v, want 10/11", p)
	}
	send(th, 1, errors.New("503"))
	if p, n := th.Stats().Probability, fake.Waiters(); math.Abs(p-11.0/12) > 1e-12 || n != 1 {
		t.Fatalf("woken by a failing request: probability %v and %d timers, want 11/12 and 1", p, n)
	}
	fake.Advance(20 * time.Second)
	if s := th.Stats(); s.Requests != 0 || s.Probability != 0 {
		t.Fatalf("a window later: Stats %+v, want nothing left", s)
	}
}

func TestDoneCountsOnce(t *testing.T) {
	th := throttle.New(throttle.WithClock(clock.NewFake()))
	p, err := th.Allow()
	if err != nil {
		t.Fatal(err)
	}
	p.Done(nil)
	p.Done(nil)
	var zero throttle.Permit
	zero.Done(nil)
	if s := th.Stats(); s.Requests != 1 || s.Accepts != 1 {
		t.Fatalf("Done twice and Done on the zero Permit: Stats %+v, want 1 request, 1 accept", s)
	}
}

func TestRefusal(t *testing.T) {
	th := throttle.New(throttle.WithClock(clock.NewFake()), throttle.WithName("payments"), throttle.WithRandom(always))
	send(th, 1, errors.New("503"))
	_, err := th.Allow()
	var re *resilience.RefusedError
	if !errors.As(err, &re) || !errors.Is(err, throttle.ErrThrottled) || !errors.Is(err, resilience.ErrRefused) {
		t.Fatalf("got %v, want a *resilience.RefusedError matching ErrThrottled and ErrRefused", err)
	}
	if diff := cmp.Diff("throttle: throttled (payments)", err.Error()); diff != "" {
		t.Errorf("message mismatch (-want +got):\n%s", diff)
	}
	if _, err2 := th.Allow(); err2 != err {
		t.Errorf("two refusals are two error values; want one shared")
	}
}

// A request that ends after its bucket has left the window is not
// counted, even if the bucket's slot has not been reused yet (found by
// the rapid model: such a late accept was added to the window's sums).
func TestRequestOlderThanTheWindowIsNotCounted(t *testing.T) {
	fake := clock.NewFake()
	th := throttle.New(throttle.WithClock(fake), throttle.WithWindow(16*time.Second), throttle.WithRandom(never))
	old, err := th.Allow() // bucket 0
	if err != nil {
		t.Fatal(err)
	}
	fake.Advance(17 * time.Second) // the buckets stop after bucket 1; bucket 0 leaves the window
	send(th, 3, errors.New("503")) // wakes them in bucket 17, whose slot is bucket 1's
	old.Done(nil)
	if s := th.Stats(); s.Requests != 3 || s.Accepts != 0 {
		t.Fatalf("Stats %+v, want the 3 failed requests of the window and no accept", s)
	}
}

// Requests that all succeed are never refused, however many run at once:
// a refusal needs a probability above 0, which only failures make (a
// throttler that read a bucket's ended requests and its accepts at two
// moments saw requests that ended between the two as not accepted, and
// refused healthy traffic under concurrency).
func TestConcurrentSuccessesAreNeverRefused(t *testing.T) {
	for _, k := range []float64{1, 2} {
		th := throttle.New(throttle.WithK(k), throttle.WithRandom(always))
		var refused atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 20000 {
					p, err := th.Allow()
					if err != nil {
						refused.Add(1)
						continue
					}
					p.Done(nil)
				}
			})
		}
		finished := make(chan struct{})
		go func() { wg.Wait(); close(finished) }()
		select {
		case <-finished:
		case <-time.After(60 * time.Second):
			t.Fatal("8 goroutines of 20000 requests did not finish within 60s")
		}
		if n := refused.Load(); n != 0 {
			t.Errorf("K %v: %d of 160000 succeeding requests refused", k, n)
		}
	}
}
