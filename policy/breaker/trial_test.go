package breaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// abandonTrial asks for a permit that must be admitted, and never reports it.
func abandonTrial(t *testing.T, b *breaker.Breaker) {
	t.Helper()
	if _, err := b.Allow(); err != nil {
		t.Fatalf("Allow = %v, want a trial", err)
	}
}

func TestTrialTimeoutIsMeasuredFromAdmission(t *testing.T) {
	var got []breaker.Transition
	b, f := newFake(breaker.WithThreshold(1), breaker.WithCooldown(10*time.Second),
		breaker.WithTrialTimeout(3*time.Second),
		breaker.WithOnStateChange(func(tr breaker.Transition) { got = append(got, tr) }))
	epoch := clock.NewFake().Now()
	fail(t, b, f, 1)
	f.Advance(10 * time.Second) // half-open at +10s
	f.Advance(5 * time.Second)  // the first trial comes at +15s
	abandoned, err := b.Allow()
	if err != nil {
		t.Fatal(err)
	}
	f.Advance(3*time.Second - 1)
	wantState(t, b, breaker.HalfOpen) // not before the timeout
	f.Advance(1)
	wantState(t, b, breaker.Open) // exactly at it
	if last := got[len(got)-1]; last.From != breaker.HalfOpen || last.To != breaker.Open || !last.At.Equal(epoch.Add(18*time.Second)) {
		t.Fatalf("last transition %+v, want half-open > open at +18s", last)
	}
	abandoned.Done(nil) // too late
	wantState(t, b, breaker.Open)
}

// wantTrialExpiresAfter admits a trial that never reports and checks that
// it expires exactly timeout later: not before, and the breaker opens.
func wantTrialExpiresAfter(t *testing.T, b *breaker.Breaker, f *clock.Fake, timeout time.Duration) {
	t.Helper()
	abandonTrial(t, b)
	f.Advance(timeout - 1)
	wantState(t, b, breaker.HalfOpen)
	f.Advance(1)
	wantState(t, b, breaker.Open)
}

func TestTrialTimeoutDefaultsToTheCooldown(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1), breaker.WithCooldown(10*time.Second))
	fail(t, b, f, 1)
	f.Advance(10 * time.Second)
	wantTrialExpiresAfter(t, b, f, 10*time.Second)
}

func TestTrialTimeoutWithCooldownBackoffIsTheScheduleMax(t *testing.T) {
	// The cooldowns are 1s, then 2s, then 4s; every trial expires after
	// the schedule's Max, a minute, whatever step opened the breaker.
	b, f := newFake(breaker.WithThreshold(1),
		breaker.WithCooldownBackoff(backoff.Exponential(time.Second, 2, time.Minute)))
	fail(t, b, f, 1)
	for _, step := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		wantRefused(t, b, breaker.ErrOpen, step)
		f.Advance(step) // the cooldown ends
		wantTrialExpiresAfter(t, b, f, time.Minute)
	}
}

func TestTrialOfZeroFirstCooldownStepCanClose(t *testing.T) {
	// Linear(0, 100ms, 1s) opens for 0 first: the breaker is half-open at
	// once, and the trial, which succeeds at once or just inside the
	// schedule's Max, must close it rather than expire at once.
	for _, took := range []time.Duration{0, time.Second - 1} {
		var got []breaker.State
		b, f := newFake(breaker.WithThreshold(1),
			breaker.WithCooldownBackoff(backoff.Linear(0, 100*time.Millisecond, time.Second)),
			breaker.WithOnStateChange(func(tr breaker.Transition) { got = append(got, tr.To) }))
		b.Record(true)
		v, err := breaker.Policy[int](b).Do(context.Background(), func(context.Context) (int, error) {
			f.Advance(took)
			return 1, nil
		})
		if v != 1 || err != nil {
			t.Fatalf("trial taking %v: Do = %v, %v; want 1, nil", took, v, err)
		}
		if diff := cmp.Diff([]breaker.State{breaker.Open, breaker.HalfOpen, breaker.Closed}, got); diff != "" {
			t.Fatalf("trial taking %v: transitions mismatch (-want +got):\n%s", took, diff)
		}
		wantState(t, b, breaker.Closed)
	}
}

func TestTrialTimeoutWithFullJitterIsTheScheduleMax(t *testing.T) {
	// Full jitter draws cooldowns anywhere in [0, step]; each trial still
	// gets the schedule's Max, 8s, and ErrTooManyTrials's hint counts down
	// from it.
	b, f := newFake(breaker.WithThreshold(1), breaker.WithCooldownBackoff(fullJitter(8*time.Second, 3)))
	cooldowns := fullJitter(8*time.Second, 3).Start()
	fail(t, b, f, 1)
	for range 6 {
		f.Advance(cooldowns.Next())
		abandonTrial(t, b)
		wantRefused(t, b, breaker.ErrTooManyTrials, 8*time.Second)
		f.Advance(3*time.Second + 250*time.Microsecond)
		wantRefused(t, b, breaker.ErrTooManyTrials, 5*time.Second) // 4.99975s, rounded up
		f.Advance(5*time.Second - 250*time.Microsecond - 1)
		wantState(t, b, breaker.HalfOpen)
		f.Advance(1) // 8s after the trial's admission
		wantState(t, b, breaker.Open)
	}
}

func TestExplicitTrialTimeoutWinsOverCooldownBackoff(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1), breaker.WithTrialTimeout(5*time.Second),
		breaker.WithCooldownBackoff(backoff.Exponential(time.Second, 2, time.Minute)))
	fail(t, b, f, 1)
	f.Advance(time.Second)
	wantTrialExpiresAfter(t, b, f, 5*time.Second)
}

func TestEachTrialHasItsOwnTimeout(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1), breaker.WithCooldown(time.Second), breaker.WithTrialTimeout(5*time.Second),
		breaker.WithMaxTrials(2), breaker.WithSuccessThreshold(2))
	fail(t, b, f, 1)
	f.Advance(time.Second)
	first, err := b.Allow()
	if err != nil {
		t.Fatal(err)
	}
	f.Advance(time.Second)
	abandonTrial(t, b) // admitted 1s later: expires at +5s from here
	f.Advance(time.Second)
	first.Done(nil)
	f.Advance(3 * time.Second) // 5s after the first trial, 4s after the second
	wantState(t, b, breaker.HalfOpen)
	f.Advance(time.Second - 1)
	wantState(t, b, breaker.HalfOpen)
	f.Advance(1) // 5s after the second
	wantState(t, b, breaker.Open)
}

func TestSlowTrialTimeoutLongerThanCooldownCanClose(t *testing.T) {
	// A dependency that takes 20s, behind a breaker that cools down for 1s:
	// with TrialTimeout above its slowest call, a trial can close it.
	b, f := newFake(breaker.WithThreshold(1), breaker.WithCooldown(time.Second), breaker.WithTrialTimeout(30*time.Second))
	fail(t, b, f, 1)
	f.Advance(time.Second)
	if err := call(t, b, f, 20*time.Second, breaker.Success); err != nil {
		t.Fatal(err)
	}
	wantState(t, b, breaker.Closed)
}

func TestWithTrialTimeoutNegativePanics(t *testing.T) {
	const want = "breaker: TrialTimeout must be >= 0, got -1s"
	if err := (breaker.Config{TrialTimeout: -time.Second}).Validate(); err == nil || err.Error() != want {
		t.Fatalf("Validate = %v, want %q", err, want)
	}
	defer func() {
		const want = "breaker: WithTrialTimeout(-1s): the timeout must be > 0; leave the option out for the default, the longest cooldown"
		if diff := cmp.Diff(any(want), recover()); diff != "" {
			t.Fatalf("WithTrialTimeout panic mismatch (-want +got):\n%s", diff)
		}
	}()
	breaker.WithTrialTimeout(-time.Second)
}

func TestTooManyTrialsRetryAfterIsTheEarliestTrialExpiry(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1), breaker.WithCooldown(time.Second), breaker.WithTrialTimeout(10*time.Second),
		breaker.WithMaxTrials(2), breaker.WithSuccessThreshold(3))
	fail(t, b, f, 1)
	f.Advance(time.Second)
	first, err := b.Allow() // expires at +11s
	if err != nil {
		t.Fatal(err)
	}
	f.Advance(3 * time.Second)
	abandonTrial(t, b) // expires at +14s
	f.Advance(2*time.Second + 500*time.Millisecond + 300*time.Microsecond)
	wantRefused(t, b, breaker.ErrTooManyTrials, 4500*time.Millisecond) // 4.4997s, rounded up
	first.Report(breaker.Ignored)                                      // frees its slot
	abandonTrial(t, b)                                                 // expires at +16.5003s
	wantRefused(t, b, breaker.ErrTooManyTrials, 7500*time.Millisecond) // the one admitted at +4s comes first
	f.Advance(7500*time.Millisecond - 300*time.Microsecond - 1)
	wantRefused(t, b, breaker.ErrTooManyTrials, time.Millisecond) // 1ns, rounded up
}

func TestTooManyTrialsRefusalsShareTheirError(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1))
	fail(t, b, f, 1)
	f.Advance(30 * time.Second)
	abandonTrial(t, b)
	if n := testing.AllocsPerRun(100, func() { _, _ = b.Allow() }); n != 0 {
		t.Fatalf("a refusal for too many trials allocates %v times", n)
	}
}

// A trial's report releases that trial, not another: when the later of two
// trials reports first, the earlier one still expires TrialTimeout after
// its own admission.
func TestLaterTrialReportingFirstLeavesTheEarlierOnesTimeout(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1), breaker.WithCooldown(time.Second), breaker.WithTrialTimeout(5*time.Second),
		breaker.WithMaxTrials(2), breaker.WithSuccessThreshold(2))
	fail(t, b, f, 1)
	f.Advance(time.Second)
	abandonTrial(t, b) // expires 5s from here
	f.Advance(time.Second)
	second, err := b.Allow()
	if err != nil {
		t.Fatal(err)
	}
	second.Done(nil)
	f.Advance(4*time.Second - 1)
	wantState(t, b, breaker.HalfOpen)
	f.Advance(1) // 5s after the first
	wantState(t, b, breaker.Open)
}
