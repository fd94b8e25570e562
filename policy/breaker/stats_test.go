package breaker_test

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

func wantStats(t *testing.T, b *breaker.Breaker, want breaker.Stats) {
	t.Helper()
	if diff := cmp.Diff(want, b.Stats()); diff != "" {
		t.Fatalf("Stats() mismatch (-want +got):\n%s", diff)
	}
}

func TestStats(t *testing.T) {
	b, f := newFake(breaker.WithName("db"), breaker.WithThreshold(2), breaker.WithCooldown(time.Minute))
	wantStats(t, b, breaker.Stats{State: breaker.Closed, Generation: 1})
	succeed(t, b, f, 2)
	fail(t, b, f, 1)
	wantStats(t, b, breaker.Stats{State: breaker.Closed, Generation: 1, Counts: breaker.Counts{
		Calls: 3, Successes: 2, Failures: 1, FailureRatio: 1.0 / 3, ConsecutiveFailures: 1}})
	fail(t, b, f, 1)
	for range 3 {
		_, _ = b.Allow()
	}
	wantStats(t, b, breaker.Stats{State: breaker.Open, Generation: 2, Counts: breaker.Counts{Rejected: 3}, Refused: 3})
	// Due transitions happen on reading, as with State.
	f.Advance(time.Minute)
	wantStats(t, b, breaker.Stats{State: breaker.HalfOpen, Generation: 3, Refused: 3})
	p, _ := b.Allow()
	_, _ = b.Allow() // too many trials
	wantStats(t, b, breaker.Stats{State: breaker.HalfOpen, Generation: 3, Counts: breaker.Counts{Rejected: 1}, Refused: 4})
	p.Done(nil)
	wantStats(t, b, breaker.Stats{State: breaker.Closed, Generation: 4, Refused: 4})
	b.ForceOpen()
	_, _ = b.Allow()
	wantStats(t, b, breaker.Stats{State: breaker.Open, Forced: true, Generation: 5, Counts: breaker.Counts{Rejected: 1}, Refused: 5})
	b.ForceClosed()
	wantStats(t, b, breaker.Stats{State: breaker.Closed, Forced: true, Generation: 6, Refused: 5})
	b.Reset()
	wantStats(t, b, breaker.Stats{State: breaker.Closed, Generation: 7, Refused: 5})
}

func TestSnapshot(t *testing.T) {
	b, f := newFake(breaker.WithName("db"), breaker.WithThreshold(3))
	succeed(t, b, f, 1)
	fail(t, b, f, 2)
	b.ForceOpen()
	_, _ = b.Allow()
	_, _ = b.Allow()
	want := telemetry.Snapshot{Kind: telemetry.Breaker, Name: "db", Refused: 2, Breaker: telemetry.BreakerStats{
		State: telemetry.StateOpen, Forced: true, Generation: 2, Rejected: 2}}
	if diff := cmp.Diff(want, b.Snapshot()); diff != "" {
		t.Fatalf("Snapshot() mismatch (-want +got):\n%s", diff)
	}
	b.Reset()
	succeed(t, b, f, 1)
	fail(t, b, f, 1)
	want = telemetry.Snapshot{Kind: telemetry.Breaker, Name: "db", Refused: 2, Breaker: telemetry.BreakerStats{
		State: telemetry.StateClosed, Generation: 3, Calls: 2, Successes: 1, Failures: 1, FailureRatio: 0.5,
		ConsecutiveFailures: 1}}
	if diff := cmp.Diff(want, b.Snapshot()); diff != "" {
		t.Fatalf("Snapshot() mismatch (-want +got):\n%s", diff)
	}
	b.Reset()
	succeed(t, b, f, 1)
	if got := b.Snapshot().Breaker.ConsecutiveSuccesses; got != 1 {
		t.Fatalf("ConsecutiveSuccesses = %d, want 1", got)
	}
}

func TestStatsIsNeverTorn(t *testing.T) {
	// One goroutine alternates ForceOpen and Reset, so that an even
	// generation is forced open and an odd one closed; others are refused
	// while it is open; readers check that every Stats belongs to one
	// generation: its state, forced flag and counts agree with the
	// generation's parity, and Refused covers Counts.Rejected.
	b, _ := newFake()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; i < 2000; i++ {
			b.ForceOpen()
			b.Reset()
		}
		close(stop)
	})
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if p, err := b.Allow(); err == nil {
					p.Done(nil)
				}
			}
		})
	}
	errs := make(chan string, 1)
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			s := b.Stats()
			open := s.Generation%2 == 0
			var bad string
			switch {
			case open && (s.State != breaker.Open || !s.Forced || s.Counts.Calls != 0):
				bad = "an even generation that is not forced open with no calls"
			case !open && (s.State != breaker.Closed || s.Forced || s.Counts.Rejected != 0):
				bad = "an odd generation that is not closed, unforced, with no refusals"
			case s.Refused < s.Counts.Rejected:
				bad = "Refused below Counts.Rejected"
			}
			if bad != "" {
				select {
				case errs <- bad + ": " + cmp.Diff(breaker.Stats{}, s):
				default:
				}
				return
			}
		}
	})
	wg.Wait()
	select {
	case e := <-errs:
		t.Fatalf("torn Stats: %s", e)
	default:
	}
}
