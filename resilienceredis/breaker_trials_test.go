package resilienceredis

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// halfOpenServer replies to reads with the half-open state of generation
// gen (epoch 7), and to a request for a trial with acquire.
func halfOpenServer(gen int64, acquire func() (any, error)) func(c scriptCall) (any, error) {
	return func(c scriptCall) (any, error) {
		if c.sha == acquireScript.Hash() {
			return acquire()
		}
		return stateReply("7", gen, 2, 0, 0), nil
	}
}

// The instance asks Redis for at most MaxTrials trials at once: a call
// beyond them is refused without a round trip, with no RetryAfter hint
// (the instance cannot know when its trials will report). An admitted
// trial that does not report holds its place for TrialTimeout (0 means
// Cooldown), to the nanosecond, and then leaves: the next call asks Redis
// again.
func TestBreakerTrialHoldsItsPlaceForTrialTimeout(t *testing.T) {
	rdb := newScripted(t, nil)
	synctest.Test(t, func(t *testing.T) {
		rdb.setReply(halfOpenServer(3, func() (any, error) { return stateReply("7", 3, 2, 3600e6, 2), nil }))
		b := newBreaker(rdb.Client, "svc", []BreakerOption{WithCooldown(time.Hour)})
		defer b.Close()
		time.Sleep(time.Hour)
		b.receive("7 3 2 3600000000") // half-open
		p, err := b.Allow()
		if err != nil {
			t.Fatalf("the first call of a half-open breaker: %v, want a trial", err)
		}
		defer p.Report(breaker.Ignored)
		admitted := time.Now()
		for _, at := range []time.Duration{0, time.Hour / 2, time.Hour} {
			time.Sleep(time.Until(admitted.Add(at)))
			_, err := b.Allow()
			if !errors.Is(err, breaker.ErrTooManyTrials) {
				t.Fatalf("%v after a trial was admitted (MaxTrials 1, TrialTimeout 1h): %v, want ErrTooManyTrials", at, err)
			}
			if d, ok := resilience.RetryAfter(err); ok {
				t.Errorf("%v after a trial was admitted: a refusal decided without Redis carries the hint %v, want none", at, d)
			}
			if n := rdb.count(acquireScript); n != 1 {
				t.Fatalf("%v after a trial was admitted: %d requests for a trial, want 1 (the others refused without asking)", at, n)
			}
		}
		time.Sleep(time.Until(admitted.Add(time.Hour + 1)))
		rdb.setReply(halfOpenServer(3, func() (any, error) { return stateReply("7", 3, 2, 1000, 0), nil }))
		_, err = b.Allow()
		if n := rdb.count(acquireScript); n != 2 {
			t.Fatalf("past TrialTimeout: %d requests for a trial, want 2 (the silent trial left)", n)
		}
		if d, ok := resilience.RetryAfter(err); !errors.Is(err, breaker.ErrTooManyTrials) || !ok || d != time.Millisecond {
			t.Errorf("refused by Redis, 1000µs to its first trial's expiry: %v (hint %v %v), want ErrTooManyTrials with RetryAfter 1ms", err, d, ok)
		}
	})
}

// A request for a trial that Redis does not admit as a trial ends the
// instance's reservation: it failed (the call is then the local
// breaker's), or the state was closed meanwhile (the call is a closed
// one). Either way the next half-open call asks Redis again.
func TestBreakerTrialRequestEnds(t *testing.T) {
	t.Run("the round trip failed", func(t *testing.T) {
		rdb := newScripted(t, nil)
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(rdb.Client, "svc", nil)
			defer b.Close()
			b.receive("7 3 2 0") // half-open
			p, err := b.Allow()  // its request fails: the local breaker admits it
			if err != nil {
				t.Fatalf("Redis unreachable: %v, want the local breaker's admission", err)
			}
			p.Done(nil)
			rdb.setReply(halfOpenServer(3, func() (any, error) { return stateReply("7", 3, 2, 30e6, 2), nil }))
			b.sync() // Redis answers again
			if v := values(t, b.Snapshot()); v["local"] != 0 {
				t.Fatalf("after Redis answered: local %v, want 0", v["local"])
			}
			p, err = b.Allow()
			if err != nil {
				t.Fatalf("half-open, no trial out: %v, want a trial", err)
			}
			p.Done(nil)
			if n := rdb.count(acquireScript); n != 2 {
				t.Errorf("%d requests for a trial, want 2", n)
			}
		})
	})
	t.Run("closed meanwhile", func(t *testing.T) {
		rdb := newScripted(t, nil)
		synctest.Test(t, func(t *testing.T) {
			rdb.setReply(halfOpenServer(3, func() (any, error) { return stateReply("7", 4, 0, 0, 1), nil }))
			b := newBreaker(rdb.Client, "svc", nil)
			defer b.Close()
			b.receive("7 3 2 0") // half-open; Redis holds it closed already
			p, err := b.Allow()
			if err != nil {
				t.Fatalf("closed meanwhile: %v, want a closed call", err)
			}
			p.Done(nil)
			if s := b.State(); s != breaker.Closed {
				t.Fatalf("after the reply of a closed state: State %v, want closed", s)
			}
			rdb.setReply(halfOpenServer(5, func() (any, error) { return stateReply("7", 5, 2, 30e6, 2), nil }))
			b.receive("7 5 2 0") // half-open again, later
			p, err = b.Allow()
			if err != nil {
				t.Fatalf("half-open, no trial out: %v, want a trial", err)
			}
			p.Done(nil)
			if n := rdb.count(acquireScript); n != 2 {
				t.Errorf("%d requests for a trial, want 2", n)
			}
		})
	})
}

// A refusal from Redis carries the time its reply gives, rounded up to a
// millisecond and never below 0: a reply of 0 or less (a state the scripts
// did not write, a clock that went back) is a hint of 0.
func TestBreakerRefusalHintAtLeastZero(t *testing.T) {
	for _, remaining := range []int64{0, -5} {
		rdb := newScripted(t, nil)
		synctest.Test(t, func(t *testing.T) {
			rdb.setReply(halfOpenServer(3, func() (any, error) { return stateReply("7", 3, 2, remaining, 0), nil }))
			b := newBreaker(rdb.Client, "svc", nil)
			defer b.Close()
			b.receive("7 3 2 0") // half-open
			_, err := b.Allow()
			if d, ok := resilience.RetryAfter(err); !errors.Is(err, breaker.ErrTooManyTrials) || !ok || d != 0 {
				t.Errorf("refused by Redis with %dµs remaining: %v (hint %v %v), want ErrTooManyTrials with RetryAfter 0", remaining, err, d, ok)
			}
		})
	}
}
