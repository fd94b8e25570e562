package throttle_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/throttle"
)

// earlyClock is a fake clock whose AfterFunc timers fire early by up to
// early (a timer due within early fires on time).
type earlyClock struct {
	*clock.Fake
	early time.Duration
}

func (c earlyClock) shift(d time.Duration) time.Duration {
	if d > c.early {
		return d - c.early
	}
	return d
}

func (c earlyClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	return earlyTimer{c.Fake.AfterFunc(c.shift(d), f), c}
}

type earlyTimer struct {
	clock.Timer
	c earlyClock
}

func (t earlyTimer) Reset(d time.Duration) bool { return t.Timer.Reset(t.c.shift(d)) }

// A timer that fires before the end of its bucket neither turns the
// buckets nor stops them: they turn at the end of the bucket, and stop
// only after a whole bucket without requests.
func TestTimerFiringEarlyWaitsForTheEndOfTheBucket(t *testing.T) {
	fake := clock.NewFake()
	th := throttle.New(throttle.WithClock(earlyClock{fake, 100 * time.Millisecond}),
		throttle.WithWindow(16*time.Second), throttle.WithRandom(never))
	p, err := th.Allow() // bucket 0; its timer fires at 0.9s
	if err != nil {
		t.Fatal(err)
	}
	fake.Advance(900 * time.Millisecond)
	if n := fake.Waiters(); n != 1 {
		t.Fatalf("0.9s, a timer fired early in a bucket with a request: %d timers, want 1", n)
	}
	fake.Advance(600 * time.Millisecond) // the bucket ended at 1s
	if p := th.Stats().Probability; p != 0.5 {
		t.Fatalf("1.5s, a call in flight from the last bucket: probability %v, want 1/2", p)
	}
	fake.Advance(450 * time.Millisecond) // 1.95s: an early fire at 1.9s, in bucket 1 that has no request
	if n := fake.Waiters(); n != 1 {
		t.Fatalf("1.95s, in a bucket without requests that has not ended: %d timers, want 1", n)
	}
	fake.Advance(100 * time.Millisecond) // bucket 1 ended at 2s without a request
	if n := fake.Waiters(); n != 0 {
		t.Fatalf("2.05s, after a bucket without requests: %d timers, want 0", n)
	}
	p.Done(nil)
}

// A request taken back (context.Canceled) after its bucket turned counts
// as never made, in the window's sums too.
func TestLateCancelIsTakenBack(t *testing.T) {
	fake := clock.NewFake()
	th := throttle.New(throttle.WithClock(fake), throttle.WithWindow(16*time.Second), throttle.WithRandom(never))
	p, err := th.Allow() // bucket 0, in flight
	if err != nil {
		t.Fatal(err)
	}
	send(th, 1, errors.New("503"))
	fake.Advance(time.Second) // bucket 1 is the current one
	p.Done(context.Canceled)
	s := th.Stats()
	if s.Requests != 1 || s.Accepts != 0 || s.Probability != 0.5 {
		t.Fatalf("a failure and a call canceled after its bucket turned: Stats %+v, want 1 request, 0 accepts, probability 1/2", s)
	}
}

// While the buckets are stopped, Stats reads the window as of now: the
// 16 buckets up to the current one, requests and accepts with the
// formula's probability; the bucket 16 back has left it.
func TestIdleStatsReadTheWindowAsOfNow(t *testing.T) {
	fake := clock.NewFake()
	th := throttle.New(throttle.WithClock(fake), throttle.WithWindow(16*time.Second), throttle.WithRandom(never))
	send(th, 3, errors.New("503"))
	send(th, 1, nil)
	fake.Advance(2 * time.Second) // bucket 1 had no request: stopped
	if n := fake.Waiters(); n != 0 {
		t.Fatalf("after a bucket without requests: %d timers, want 0", n)
	}
	fake.Advance(13*time.Second + 500*time.Millisecond) // 15.5s: bucket 15, the window's last with bucket 0
	want := (4 - 2*1) / (4 + 1.0)
	if s := th.Stats(); s.Requests != 4 || s.Accepts != 1 || math.Abs(s.Probability-want) > 1e-12 {
		t.Fatalf("15.5s after 3 failures and an accept: Stats %+v, want 4 requests, 1 accept, probability %v", s, want)
	}
	fake.Advance(500 * time.Millisecond) // 16s: bucket 16, bucket 0 has left the window
	if s := th.Stats(); s.Requests != 0 || s.Accepts != 0 || s.Probability != 0 {
		t.Fatalf("16s after 3 failures and an accept: Stats %+v, want nothing left", s)
	}
}

// One failure and nothing else, read while stopped: probability
// (1 − 0)/(1 + 1) = 1/2, as when running.
func TestIdleStatsOfOneFailure(t *testing.T) {
	fake := clock.NewFake()
	th := throttle.New(throttle.WithClock(fake), throttle.WithWindow(16*time.Second), throttle.WithRandom(never))
	send(th, 1, errors.New("503"))
	fake.Advance(5 * time.Second)
	if s := th.Stats(); s.Requests != 1 || s.Probability != 0.5 {
		t.Fatalf("idle after one failure: Stats %+v, want 1 request, probability 1/2", s)
	}
}

// A request is refused when Random's number is below the probability,
// not at it: with one failure in the window (probability 1/2), a draw of
// 1/2 lets the request through and the next float64 down refuses it.
func TestRefusedOnlyBelowTheProbability(t *testing.T) {
	for _, tt := range []struct {
		draw    float64
		refused bool
	}{{0.5, false}, {math.Nextafter(0.5, 0), true}} {
		th := throttle.New(throttle.WithClock(clock.NewFake()), throttle.WithRandom(func() float64 { return tt.draw }))
		send(th, 1, errors.New("503"))
		if _, err := th.Allow(); (err != nil) != tt.refused {
			t.Errorf("probability 1/2, draw %v: Allow returned %v, want refused %v", tt.draw, err, tt.refused)
		}
	}
}

// Bucket e spans [start + e·width, start + (e+1)·width): with buckets of
// 1ns (a window of 16ns), a call made at New's instant is in bucket 0 and
// counts as in flight from 1ns on.
func TestFirstBucketStartsAtNew(t *testing.T) {
	fake := clock.NewFake()
	th := throttle.New(throttle.WithClock(fake), throttle.WithWindow(16*time.Nanosecond), throttle.WithRandom(never))
	p, err := th.Allow()
	if err != nil {
		t.Fatal(err)
	}
	fake.Advance(time.Nanosecond)
	if s := th.Stats(); s.Requests != 1 || s.Probability != 0.5 {
		t.Fatalf("1ns after a call made at New, buckets of 1ns: Stats %+v, want 1 request in flight from the last bucket, probability 1/2", s)
	}
	p.Done(nil)
}
