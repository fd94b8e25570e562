package breaker_test

import (
	"github.com/f0b5b96b/resilience/internal/snapview"
	"strings"
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
	wantStats(t, b, breaker.Stats{State: breaker.Open, Generation: 2, Counts: breaker.Counts{Refused: 3}, Refused: 3, CooldownLeft: time.Minute})
	// Due transitions happen on reading, as with State.
	f.Advance(time.Minute)
	wantStats(t, b, breaker.Stats{State: breaker.HalfOpen, Generation: 3, Refused: 3})
	p, _ := b.Allow()
	_, _ = b.Allow() // too many trials
	wantStats(t, b, breaker.Stats{State: breaker.HalfOpen, Generation: 3, Counts: breaker.Counts{Refused: 1}, Refused: 4})
	p.Done(nil)
	wantStats(t, b, breaker.Stats{State: breaker.Closed, Generation: 4, Refused: 4})
	b.ForceOpen()
	_, _ = b.Allow()
	wantStats(t, b, breaker.Stats{State: breaker.Open, Forced: true, Generation: 5, Counts: breaker.Counts{Refused: 1}, Refused: 5})
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
	values := func(kv ...float64) map[string]float64 {
		m := map[string]float64{}
		for i, n := range []string{"open_for", "cooldown_left", "forced", "generation", "window_calls", "window_successes", "window_failures", "window_slow",
			"window_refused", "failure_ratio", "consecutive_successes", "consecutive_failures"} {
			m[n] = kv[i]
		}
		return m
	}
	want := snapview.View{Kind: breaker.Kind, Name: "db", State: telemetry.StateOpen, Refused: 2,
		Values: values(0, 0, 1, 2, 0, 0, 0, 0, 2, 0, 0, 0)}
	if diff := cmp.Diff(want, snapview.Of(b.Snapshot())); diff != "" {
		t.Fatalf("Snapshot() mismatch (-want +got):\n%s", diff)
	}
	b.Reset()
	succeed(t, b, f, 1)
	fail(t, b, f, 1)
	want = snapview.View{Kind: breaker.Kind, Name: "db", State: telemetry.StateClosed, Refused: 2,
		Values: values(0, 0, 0, 3, 2, 1, 1, 0, 0, 0.5, 0, 1)}
	if diff := cmp.Diff(want, snapview.Of(b.Snapshot())); diff != "" {
		t.Fatalf("Snapshot() mismatch (-want +got):\n%s", diff)
	}
	b.Reset()
	succeed(t, b, f, 1)
	if got, _ := b.Snapshot().Value("consecutive_successes"); got != 1 {
		t.Fatalf("ConsecutiveSuccesses = %v, want 1", got)
	}
}

// How long an open breaker has been open and the cooldown it has left:
// Stats.OpenFor and CooldownLeft, the Snapshot's open_for and
// cooldown_left (in seconds); both 0 while it is not open, and the
// cooldown left 0 while it is held open by ForceOpen.
func TestStatsOpenForAndCooldownLeft(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1), breaker.WithCooldown(time.Minute))
	check := func(state breaker.State, openFor, left time.Duration) {
		t.Helper()
		s := b.Stats()
		if s.State != state || s.OpenFor != openFor || s.CooldownLeft != left {
			t.Fatalf("Stats() = %v, open for %v, cooldown left %v; want %v, %v, %v", s.State, s.OpenFor, s.CooldownLeft, state, openFor, left)
		}
		snap := b.Snapshot()
		o, ok1 := snap.Value("open_for")
		l, ok2 := snap.Value("cooldown_left")
		if !ok1 || !ok2 || o != openFor.Seconds() || l != left.Seconds() {
			t.Fatalf("Snapshot() open_for %v (%v), cooldown_left %v (%v); want %v, %v", o, ok1, l, ok2, openFor.Seconds(), left.Seconds())
		}
	}
	check(breaker.Closed, 0, 0)
	f.Advance(5 * time.Second)
	check(breaker.Closed, 0, 0)
	fail(t, b, f, 1) // trips
	check(breaker.Open, 0, time.Minute)
	f.Advance(20 * time.Second)
	check(breaker.Open, 20*time.Second, 40*time.Second)
	f.Advance(40 * time.Second)
	check(breaker.HalfOpen, 0, 0)
	fail(t, b, f, 1) // the trial fails: open again, for a new cooldown
	f.Advance(1500 * time.Millisecond)
	check(breaker.Open, 1500*time.Millisecond, time.Minute-1500*time.Millisecond)
	b.ForceOpen() // still open: held, with no cooldown
	f.Advance(time.Hour)
	check(breaker.Open, time.Hour+1500*time.Millisecond, 0)
	b.Reset()
	check(breaker.Closed, 0, 0)
	b.ForceOpen()
	f.Advance(time.Second)
	check(breaker.Open, time.Second, 0)
}

func TestStatsIsNeverTorn(t *testing.T) {
	// One goroutine alternates ForceOpen and Reset, so that an even
	// generation is forced open and an odd one closed; others are refused
	// while it is open; readers check that every Stats belongs to one
	// generation: its state, forced flag and counts agree with the
	// generation's parity, and Refused covers Counts.Refused.
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
			case !open && (s.State != breaker.Closed || s.Forced || s.Counts.Refused != 0):
				bad = "an odd generation that is not closed, unforced, with no refusals"
			case s.Refused < s.Counts.Refused:
				bad = "Refused below Counts.Refused"
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

// TestSnapshotWindowMeaning: a closed breaker's window_calls is over its
// sliding window when it has one (calls leave it as time passes), and
// since the breaker closed when it has none (only a Threshold rule); the
// help of the value says both.
func TestSnapshotWindowMeaning(t *testing.T) {
	windowed, fw := newFake(breaker.WithFailureRatio(0.5), breaker.WithWindowDuration(10*time.Second))
	threshold, ft := newFake(breaker.WithThreshold(5))
	succeed(t, windowed, fw, 3)
	succeed(t, threshold, ft, 3)
	fw.Advance(time.Minute)
	ft.Advance(time.Minute)
	for _, c := range []struct {
		name string
		b    *breaker.Breaker
		want float64
	}{{"windowed", windowed, 0}, {"threshold only", threshold, 3}} {
		if got, _ := c.b.Snapshot().Value("window_calls"); got != c.want {
			t.Errorf("%s: window_calls = %v a minute after 3 calls, want %v", c.name, got, c.want)
		}
	}
	for _, v := range threshold.Snapshot().Values {
		if v.Name == "window_calls" && (!strings.Contains(v.Help, "sliding window") || !strings.Contains(v.Help, "since the current state began")) {
			t.Errorf("window_calls help %q does not say both meanings", v.Help)
		}
	}
}
