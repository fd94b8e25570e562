package breaker_test

import (
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

func TestTrialTimeoutWithCooldownBackoffIsTheCurrentStep(t *testing.T) {
	// The schedule's Max is a minute; the trials expire after the step
	// that opened the breaker: 1s, then 2s, then 4s.
	b, f := newFake(breaker.WithThreshold(1),
		breaker.WithCooldownBackoff(backoff.Exponential(time.Second, 2, time.Minute)))
	fail(t, b, f, 1)
	for _, step := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		f.Advance(step) // the cooldown ends
		wantTrialExpiresAfter(t, b, f, step)
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
		if diff := cmp.Diff(any(want), recover()); diff != "" {
			t.Fatalf("New panic mismatch (-want +got):\n%s", diff)
		}
	}()
	breaker.New(breaker.WithTrialTimeout(-time.Second))
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
