package breaker_test

import (
	"errors"
	"github.com/f0b5b96b/resilience"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

var errBoom = errors.New("boom")

// newFake returns a breaker on a fake clock.
func newFake(opts ...breaker.Option) (*breaker.Breaker, *clock.Fake) {
	f := clock.NewFake()
	return breaker.New(append([]breaker.Option{breaker.WithClock(f)}, opts...)...), f
}

// call makes one call with the given outcome, taking d on the clock, and
// returns Allow's error.
func call(t *testing.T, b *breaker.Breaker, f *clock.Fake, d time.Duration, o breaker.Outcome) error {
	t.Helper()
	p, err := b.Allow()
	if err != nil {
		return err
	}
	f.Advance(d)
	p.Report(o)
	return nil
}

func succeed(t *testing.T, b *breaker.Breaker, f *clock.Fake, n int) {
	t.Helper()
	for range n {
		if err := call(t, b, f, 0, breaker.Success); err != nil {
			t.Fatalf("Allow = %v, want admitted", err)
		}
	}
}

func fail(t *testing.T, b *breaker.Breaker, f *clock.Fake, n int) {
	t.Helper()
	for range n {
		if err := call(t, b, f, 0, breaker.Failure); err != nil {
			t.Fatalf("Allow = %v, want admitted", err)
		}
	}
}

func wantState(t *testing.T, b *breaker.Breaker, want breaker.State) {
	t.Helper()
	if got := b.State(); got != want {
		t.Fatalf("State() = %v, want %v", got, want)
	}
}

func wantCounts(t *testing.T, b *breaker.Breaker, want breaker.Counts) {
	t.Helper()
	if diff := cmp.Diff(want, b.Counts()); diff != "" {
		t.Fatalf("Counts() mismatch (-want +got):\n%s", diff)
	}
}

func wantRefused(t *testing.T, b *breaker.Breaker, sentinel error, retryAfter time.Duration) {
	t.Helper()
	p, err := b.Allow()
	if !errors.Is(err, sentinel) {
		p.Report(breaker.Ignored)
		t.Fatalf("Allow = %v, want %v", err, sentinel)
	}
	var re *resilience.RefusedError
	if !errors.As(err, &re) || re.RetryAfter() != retryAfter {
		t.Fatalf("Allow = %v, want a RefusedError with RetryAfter %v", err, retryAfter)
	}
}

// ceilMillis rounds d up to a whole millisecond, as RetryAfter does.
func ceilMillis(d time.Duration) time.Duration {
	if r := d % time.Millisecond; r != 0 {
		d += time.Millisecond - r
	}
	return d
}

func TestZeroConfigIsAWorkingBreaker(t *testing.T) {
	b, f := newFake()
	fail(t, b, f, 4)
	wantState(t, b, breaker.Closed)
	fail(t, b, f, 1)
	wantState(t, b, breaker.Open)
	wantRefused(t, b, breaker.ErrOpen, 30*time.Second)

	f.Advance(30*time.Second - 1)
	wantState(t, b, breaker.Open)
	wantRefused(t, b, breaker.ErrOpen, time.Millisecond) // 1ns, rounded up
	f.Advance(1)
	wantState(t, b, breaker.HalfOpen)

	trial, err := b.Allow()
	if err != nil {
		t.Fatalf("first half-open Allow = %v, want a trial", err)
	}
	wantRefused(t, b, breaker.ErrTooManyTrials, 30*time.Second) // the trial expires 30s from now
	trial.Done(nil)
	wantState(t, b, breaker.Closed)
}

func TestConsecutiveFailuresDoNotDecay(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(3))
	for range 2 {
		fail(t, b, f, 1)
		f.Advance(24 * time.Hour)
	}
	wantState(t, b, breaker.Closed)
	fail(t, b, f, 1)
	wantState(t, b, breaker.Open)
}

func TestSuccessResetsConsecutiveFailures(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(3))
	fail(t, b, f, 2)
	succeed(t, b, f, 1)
	fail(t, b, f, 2)
	wantCounts(t, b, breaker.Counts{Calls: 5, Successes: 1, Failures: 4, FailureRatio: 0.8, ConsecutiveFailures: 2})
	wantState(t, b, breaker.Closed)
	fail(t, b, f, 1)
	wantState(t, b, breaker.Open)
}

func TestFailureRatioCountWindow(t *testing.T) {
	b, f := newFake(breaker.WithFailureRatio(0.5), breaker.WithWindowCalls(10), breaker.WithMinCalls(4))
	// Too few calls for the rule: 3 failures out of 3.
	fail(t, b, f, 3)
	wantState(t, b, breaker.Closed)
	// Ten successes push the failures out of the window.
	succeed(t, b, f, 10)
	wantCounts(t, b, breaker.Counts{Calls: 10, Successes: 10, ConsecutiveSuccesses: 10})
	// 4 failures in the last 10 calls: 0.4.
	fail(t, b, f, 4)
	wantCounts(t, b, breaker.Counts{Calls: 10, Successes: 6, Failures: 4, FailureRatio: 0.4, ConsecutiveFailures: 4})
	wantState(t, b, breaker.Closed)
	// The fifth makes 0.5.
	fail(t, b, f, 1)
	wantState(t, b, breaker.Open)
}

func TestFailureRatioNeedsMinCalls(t *testing.T) {
	// Defaults: the last 100 calls, at least 10 of them.
	b, f := newFake(breaker.WithFailureRatio(1))
	fail(t, b, f, 9)
	wantState(t, b, breaker.Closed)
	fail(t, b, f, 1)
	wantState(t, b, breaker.Open)
}

func TestRatioRulesAreCheckedOnlyOnFailuresAndSlowCalls(t *testing.T) {
	// 3 failures, then a success that brings the window to MinCalls with
	// a ratio of 0.75: no trip until a failure or a slow call is counted.
	for _, last := range []struct {
		d time.Duration
		o breaker.Outcome
	}{{0, breaker.Failure}, {2 * time.Second, breaker.Success}} {
		b, f := newFake(breaker.WithFailureRatio(0.5), breaker.WithWindowCalls(10), breaker.WithMinCalls(4),
			breaker.WithSlowCall(time.Second))
		fail(t, b, f, 3)
		succeed(t, b, f, 1)
		wantCounts(t, b, breaker.Counts{Calls: 4, Successes: 1, Failures: 3, FailureRatio: 0.75, ConsecutiveSuccesses: 1})
		succeed(t, b, f, 1) // 3 of 5: still no trip
		wantState(t, b, breaker.Closed)
		if err := call(t, b, f, last.d, last.o); err != nil {
			t.Fatal(err)
		}
		wantState(t, b, breaker.Open)
	}
	// The same for the slow-call ratio: slow calls, then fast successes.
	b, f := newFake(breaker.WithSlowCallRatio(0.5), breaker.WithSlowCall(time.Second), breaker.WithWindowCalls(10),
		breaker.WithMinCalls(4))
	for range 3 {
		if err := call(t, b, f, 2*time.Second, breaker.Success); err != nil {
			t.Fatal(err)
		}
	}
	succeed(t, b, f, 1)
	wantState(t, b, breaker.Closed)
	fail(t, b, f, 1)
	wantState(t, b, breaker.Open)
}

func TestFailureRatioTimeWindowAgesOut(t *testing.T) {
	for _, c := range []struct {
		gap  time.Duration
		want breaker.State
	}{
		{9 * time.Second, breaker.Open},    // F . S F: 2 of 3 failed
		{10 * time.Second, breaker.Closed}, // the first F has left: 1 of 2
	} {
		b, f := newFake(breaker.WithFailureRatio(0.6), breaker.WithWindowDuration(10*time.Second),
			breaker.WithWindowBuckets(10), breaker.WithMinCalls(2))
		fail(t, b, f, 1)
		f.Advance(c.gap)
		succeed(t, b, f, 1)
		fail(t, b, f, 1)
		if got := b.State(); got != c.want {
			t.Errorf("gap %v: State() = %v, want %v", c.gap, got, c.want)
		}
	}
}

func TestTimeWindowCountsAreFresh(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(10), breaker.WithWindowDuration(4*time.Second), breaker.WithWindowBuckets(4))
	fail(t, b, f, 1)
	f.Advance(2 * time.Second)
	succeed(t, b, f, 2)
	wantCounts(t, b, breaker.Counts{Calls: 3, Successes: 2, Failures: 1, FailureRatio: 1.0 / 3, ConsecutiveSuccesses: 2})
	f.Advance(2 * time.Second) // the failure's bucket leaves the window
	wantCounts(t, b, breaker.Counts{Calls: 2, Successes: 2, ConsecutiveSuccesses: 2})
	f.Advance(2 * time.Second)
	wantCounts(t, b, breaker.Counts{ConsecutiveSuccesses: 2})
}

func TestSlowCallRatio(t *testing.T) {
	b, f := newFake(breaker.WithSlowCallRatio(0.5), breaker.WithSlowCall(time.Second),
		breaker.WithWindowCalls(10), breaker.WithMinCalls(3))
	mustCall := func(d time.Duration, o breaker.Outcome) {
		t.Helper()
		if err := call(t, b, f, d, o); err != nil {
			t.Fatal(err)
		}
	}
	mustCall(2*time.Second, breaker.Success) // slow
	mustCall(time.Second, breaker.Success)   // exactly SlowCall: not slow
	mustCall(0, breaker.Success)
	wantCounts(t, b, breaker.Counts{Calls: 3, Successes: 3, Slow: 1, ConsecutiveSuccesses: 3})
	mustCall(3*time.Second, breaker.Failure) // slow too, whether it failed or not: 2 of 4
	wantState(t, b, breaker.Open)
}

func TestSlowTrialReopens(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1), breaker.WithSlowCall(time.Second), breaker.WithCooldown(time.Minute))
	fail(t, b, f, 1)
	f.Advance(time.Minute)
	if err := call(t, b, f, 2*time.Second, breaker.Success); err != nil {
		t.Fatal(err)
	}
	wantState(t, b, breaker.Open)
}

func TestTripIf(t *testing.T) {
	var seen []breaker.Counts
	b, f := newFake(breaker.WithTripIf(func(c breaker.Counts) bool {
		seen = append(seen, c)
		return c.Failures >= 2 && c.Successes == 0
	}))
	fail(t, b, f, 1)
	succeed(t, b, f, 1) // not consulted on success
	fail(t, b, f, 1)    // 2 failures, but a success
	b.Reset()
	fail(t, b, f, 2)
	wantState(t, b, breaker.Open)
	want := []breaker.Counts{
		{Calls: 1, Failures: 1, FailureRatio: 1, ConsecutiveFailures: 1},
		{Calls: 3, Successes: 1, Failures: 2, FailureRatio: 2.0 / 3, ConsecutiveFailures: 1},
		{Calls: 1, Failures: 1, FailureRatio: 1, ConsecutiveFailures: 1},
		{Calls: 2, Failures: 2, FailureRatio: 1, ConsecutiveFailures: 2},
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Fatalf("counts seen by TripIf mismatch (-want +got):\n%s", diff)
	}
}

func TestOnlyConfiguredRulesTrip(t *testing.T) {
	// A ratio rule on its own turns the default Threshold of 5 off.
	b, f := newFake(breaker.WithFailureRatio(0.9), breaker.WithWindowCalls(20), breaker.WithMinCalls(20))
	fail(t, b, f, 19)
	wantState(t, b, breaker.Closed)
}

func TestCooldownGrowsAlongBackoffAndResetsOnClose(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1),
		breaker.WithCooldownBackoff(backoff.Exponential(time.Second, 2, 8*time.Second)))
	fail(t, b, f, 1)
	for _, d := range []time.Duration{1, 2, 4, 8, 8, 8} {
		d *= time.Second
		wantRefused(t, b, breaker.ErrOpen, d)
		f.Advance(d)
		fail(t, b, f, 1) // the trial fails
	}
	wantRefused(t, b, breaker.ErrOpen, 8*time.Second)
	f.Advance(8 * time.Second)
	succeed(t, b, f, 1)
	wantState(t, b, breaker.Closed)
	fail(t, b, f, 1)
	wantRefused(t, b, breaker.ErrOpen, time.Second)
}

// fullJitter returns Exponential(1s, 2, max) with full jitter, drawing
// from a source seeded with seed: schedules made with the same arguments
// draw the same cooldowns.
func fullJitter(max time.Duration, seed uint64) backoff.Schedule {
	return backoff.Exponential(time.Second, 2, max).
		WithJitter(backoff.Full).WithRand(rand.New(rand.NewPCG(seed, seed)))
}

func TestCooldownBackoffJitter(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1), breaker.WithCooldownBackoff(fullJitter(30*time.Second, 1)))
	want := fullJitter(30*time.Second, 1).Start()
	fail(t, b, f, 1)
	for range 10 {
		d := want.Next()
		if d == 0 {
			wantState(t, b, breaker.HalfOpen)
		} else {
			wantRefused(t, b, breaker.ErrOpen, ceilMillis(d))
		}
		f.Advance(d)
		fail(t, b, f, 1)
	}
}

func TestHalfOpenMaxTrials(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1), breaker.WithMaxTrials(3), breaker.WithSuccessThreshold(3))
	fail(t, b, f, 1)
	f.Advance(30 * time.Second)
	var ps [3]breaker.Permit
	for i := range ps {
		var err error
		if ps[i], err = b.Allow(); err != nil {
			t.Fatalf("trial %d: Allow = %v", i, err)
		}
	}
	wantRefused(t, b, breaker.ErrTooManyTrials, 30*time.Second)
	ps[0].Report(breaker.Ignored) // frees its slot, counts neither way
	p, err := b.Allow()
	if err != nil {
		t.Fatalf("Allow after an ignored trial = %v", err)
	}
	wantRefused(t, b, breaker.ErrTooManyTrials, 30*time.Second)
	wantCounts(t, b, breaker.Counts{Refused: 2})
	ps[1].Done(nil)
	ps[2].Done(nil)
	wantState(t, b, breaker.HalfOpen)
	p.Done(nil)
	wantState(t, b, breaker.Closed)
}

func TestHalfOpenFailureReopens(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1), breaker.WithMaxTrials(2), breaker.WithSuccessThreshold(2))
	fail(t, b, f, 1)
	f.Advance(30 * time.Second)
	succeed(t, b, f, 1)
	wantCounts(t, b, breaker.Counts{Calls: 1, Successes: 1, ConsecutiveSuccesses: 1})
	fail(t, b, f, 1)
	wantState(t, b, breaker.Open)
}

func TestAbandonedTrialExpires(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1), breaker.WithCooldown(10*time.Second))
	fail(t, b, f, 1)
	f.Advance(10 * time.Second)
	abandoned, err := b.Allow()
	if err != nil {
		t.Fatal(err)
	}
	f.Advance(10*time.Second - 1)
	wantRefused(t, b, breaker.ErrTooManyTrials, time.Millisecond) // it expires in 1ns
	f.Advance(1)                                                  // one cooldown after its admission: the trial expires
	wantState(t, b, breaker.Open)
	wantRefused(t, b, breaker.ErrOpen, 10*time.Second)
	abandoned.Done(nil) // too late: an older generation
	wantState(t, b, breaker.Open)
	f.Advance(10 * time.Second)
	succeed(t, b, f, 1)
	wantState(t, b, breaker.Closed)
}

func TestRecordCountsOnlyWhileClosed(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(2))
	b.Record(false)
	b.Record(true)
	wantCounts(t, b, breaker.Counts{Calls: 2, Successes: 1, Failures: 1, FailureRatio: 0.5, ConsecutiveFailures: 1})
	b.Record(true)
	wantState(t, b, breaker.Open)
	b.Record(false)
	wantCounts(t, b, breaker.Counts{})
	f.Advance(30 * time.Second)
	b.Record(false) // half-open: only trials decide
	wantState(t, b, breaker.HalfOpen)
	wantCounts(t, b, breaker.Counts{})
}

func TestForceOpen(t *testing.T) {
	b, f := newFake()
	b.ForceOpen()
	wantState(t, b, breaker.Open)
	f.Advance(time.Hour)
	wantState(t, b, breaker.Open)
	_, err := b.Allow()
	if !errors.Is(err, breaker.ErrOpen) || err.Error() != "breaker: forced open, retry never" {
		t.Fatalf("Allow = %v, want the forced ErrOpen", err)
	}
	wantRefused(t, b, breaker.ErrOpen, never)
	b.Reset()
	wantState(t, b, breaker.Closed)
	fail(t, b, f, 5)
	wantState(t, b, breaker.Open)
}

func TestForceClosedAdmitsAndCountsButNeverTrips(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1), breaker.WithFailureRatio(0.1))
	fail(t, b, f, 1)
	b.ForceClosed()
	wantState(t, b, breaker.Closed)
	fail(t, b, f, 100)
	b.Record(true)
	succeed(t, b, f, 1)
	wantState(t, b, breaker.Closed)
	wantCounts(t, b, breaker.Counts{Calls: 100, Successes: 1, Failures: 99, FailureRatio: 0.99, ConsecutiveSuccesses: 1})
	b.Reset()
	fail(t, b, f, 1)
	wantState(t, b, breaker.Open)
}

func TestStaleReportsAreIgnored(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1))
	old, err := b.Allow()
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	old.Done(errBoom) // from the generation before Reset
	wantState(t, b, breaker.Closed)
	wantCounts(t, b, breaker.Counts{})

	old2, _ := b.Allow()
	fail(t, b, f, 1) // trips: a new generation
	old2.Done(nil)
	wantCounts(t, b, breaker.Counts{})
	f.Advance(30 * time.Second)
	old3, _ := b.Allow() // a trial
	b.ForceOpen()
	b.Reset()
	old3.Done(errBoom)
	wantCounts(t, b, breaker.Counts{})
}

func TestSecondReportIsIgnored(t *testing.T) {
	b, _ := newFake(breaker.WithThreshold(2))
	p, _ := b.Allow()
	p.Done(errBoom)
	p.Done(errBoom)
	p.Report(breaker.Failure)
	p.Done(nil)
	wantCounts(t, b, breaker.Counts{Calls: 1, Failures: 1, FailureRatio: 1, ConsecutiveFailures: 1})
	wantState(t, b, breaker.Closed)

	// A first report by Report, then any other: only the first counts.
	p, _ = b.Allow()
	p.Report(breaker.Success)
	p.Report(breaker.Failure)
	p.Done(errBoom)
	p.Done(nil)
	wantCounts(t, b, breaker.Counts{Calls: 2, Successes: 1, Failures: 1, FailureRatio: 0.5, ConsecutiveSuccesses: 1})
	wantState(t, b, breaker.Closed)
}

func TestSecondReportOfTrialIsIgnored(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1), breaker.WithMaxTrials(1), breaker.WithSuccessThreshold(2))
	fail(t, b, f, 1)
	f.Advance(30 * time.Second)
	p, _ := b.Allow()
	p.Report(breaker.Ignored)
	p.Done(nil)
	wantCounts(t, b, breaker.Counts{})
	q, err := b.Allow() // the slot was freed once
	if err != nil {
		t.Fatal(err)
	}
	wantRefused(t, b, breaker.ErrTooManyTrials, 30*time.Second)
	q.Done(nil)
}

func TestRefusedPermitReportsNothing(t *testing.T) {
	b, _ := newFake()
	b.ForceOpen()
	p, err := b.Allow()
	if err == nil {
		t.Fatal("Allow admitted a call to a forced-open breaker")
	}
	p.Done(nil)
	p.Report(breaker.Failure)
	var zero breaker.Permit
	zero.Done(errBoom)
	wantCounts(t, b, breaker.Counts{Refused: 1})
}

func TestReportPanicsOnInvalidOutcome(t *testing.T) {
	b, _ := newFake()
	p, _ := b.Allow()
	defer func() {
		want := "breaker: Report outcome must be Success, Failure or Ignored, got 7"
		if r := recover(); r != want {
			t.Fatalf("panic = %v, want %q", r, want)
		}
	}()
	p.Report(breaker.Outcome(7))
}

func TestStateAndCountsAreFresh(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1), breaker.WithCooldown(time.Second))
	fail(t, b, f, 1)
	wantRefused(t, b, breaker.ErrOpen, time.Second)
	wantCounts(t, b, breaker.Counts{Refused: 1})
	f.Advance(time.Second)
	wantCounts(t, b, breaker.Counts{}) // half-open already: its own counts
	wantState(t, b, breaker.HalfOpen)
}

func TestName(t *testing.T) {
	if got := breaker.New(breaker.WithName("payments")).Name(); got != "payments" {
		t.Fatalf("Name() = %q", got)
	}
	if got := breaker.New().Name(); got != "" {
		t.Fatalf("Name() = %q, want empty", got)
	}
}

func TestClosedPathDoesNotAllocate(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []breaker.Option
	}{
		{"default", nil},
		{"count window", []breaker.Option{breaker.WithFailureRatio(0.5)}},
		{"time window", []breaker.Option{breaker.WithFailureRatio(0.5), breaker.WithWindowDuration(time.Minute)}},
		{"slow calls", []breaker.Option{breaker.WithSlowCall(time.Second)}},
	} {
		b, _ := newFake(c.opts...)
		if n := testing.AllocsPerRun(1000, func() {
			p, _ := b.Allow()
			p.Done(nil)
		}); n != 0 {
			t.Errorf("%s: Allow+Done allocates %v times", c.name, n)
		}
	}
}

func TestLateFirstTrialCanClose(t *testing.T) {
	// A dependency called rarely: the first call after the cooldown comes
	// long after it, and someone polls State meanwhile. Its trial must
	// still get a full cooldown to report.
	b, f := newFake(breaker.WithThreshold(1), breaker.WithCooldown(10*time.Second))
	fail(t, b, f, 1)
	for range 6 {
		f.Advance(10 * time.Second)
		wantState(t, b, breaker.HalfOpen)
	}
	if err := call(t, b, f, 10*time.Second-1, breaker.Success); err != nil {
		t.Fatal(err)
	}
	wantState(t, b, breaker.Closed)
}

func TestRefusalsShareTheirError(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1), breaker.WithCooldown(time.Second))
	fail(t, b, f, 1)
	_, e1 := b.Allow()
	f.Advance(time.Millisecond / 2)
	_, e2 := b.Allow() // the same millisecond is left: the same error
	f.Advance(time.Millisecond)
	_, e3 := b.Allow()
	if e1 != e2 || e2 == e3 {
		t.Fatalf("errors %p %p %p: want the first two shared, the third new", e1, e2, e3)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = b.Allow() }); n != 0 {
		t.Fatalf("a refusal allocates %v times", n)
	}
	b.ForceOpen()
	if n := testing.AllocsPerRun(100, func() { _, _ = b.Allow() }); n != 0 {
		t.Fatalf("a forced refusal allocates %v times", n)
	}
	wantCounts(t, b, breaker.Counts{Refused: 101}) // ForceOpen started a new generation; AllocsPerRun runs 101 times
}

func TestClockGoingBackwards(t *testing.T) {
	// A clock may be set back (an NTP step with a wall clock, a test's
	// Fake.Set). The breaker keeps working: nothing panics, windows still
	// count, and the cooldown still ends.
	b, f := newFake(breaker.WithThreshold(3), breaker.WithFailureRatio(0.9),
		breaker.WithWindowDuration(10*time.Second), breaker.WithCooldown(time.Minute))
	fail(t, b, f, 1)
	f.Set(f.Now().Add(-time.Hour))
	succeed(t, b, f, 1)
	// The failure "from the future" is not in the window.
	wantCounts(t, b, breaker.Counts{Calls: 1, Successes: 1, ConsecutiveSuccesses: 1})
	fail(t, b, f, 3)
	wantState(t, b, breaker.Open)
	f.Set(f.Now().Add(-time.Hour))
	wantState(t, b, breaker.Open)
	f.Advance(time.Hour + time.Minute)
	succeed(t, b, f, 1)
	wantState(t, b, breaker.Closed)
}

func TestRealClock(t *testing.T) {
	// The real clock (the default), in a synctest bubble: time is virtual.
	bubble(t, func(t *testing.T) {
		b := breaker.New(breaker.WithThreshold(1), breaker.WithCooldown(time.Second),
			breaker.WithSlowCall(100*time.Millisecond))
		p, _ := b.Allow()
		time.Sleep(200 * time.Millisecond)
		p.Done(nil) // a slow success
		if c := b.Counts(); c.Slow != 1 {
			t.Fatalf("Counts() = %+v, want one slow call", c)
		}
		b.Record(true)
		wantRefused(t, b, breaker.ErrOpen, time.Second)
		time.Sleep(999 * time.Millisecond)
		wantRefused(t, b, breaker.ErrOpen, time.Millisecond)
		time.Sleep(time.Millisecond)
		wantState(t, b, breaker.HalfOpen)
	})
}

// A time-based window reuses its buckets: the bucket of an instant is the
// bucket of the same instant one window length earlier, and must be reset
// before it counts again. Pinned over three windows (no other test runs
// past one): counts hold only the current window's calls, and a ratio
// rule trips on them in the second and third windows alike.
func TestTimeWindowBucketReusedAfterOneWindowIsReset(t *testing.T) {
	for _, ratioIn := range []int{2, 3} { // the window in which the ratio is reached
		f := clock.NewFake()
		b := breaker.New(breaker.WithClock(f), breaker.WithFailureRatio(0.5), breaker.WithMinCalls(4),
			breaker.WithWindowDuration(10*time.Second), breaker.WithWindowBuckets(10))
		do := func(o breaker.Outcome, n int) {
			t.Helper()
			for range n {
				p, err := b.Allow()
				if err != nil {
					t.Fatalf("window %d: Allow = %v, want admitted", ratioIn, err)
				}
				p.Report(o)
			}
		}
		f.Advance(500 * time.Millisecond) // mid-bucket 0
		for w := 1; w <= 3; w++ {
			if w > 1 {
				f.Advance(10 * time.Second) // bucket 0 again, one window later
			}
			if got := b.Counts().Calls; got != 0 {
				t.Fatalf("window %d, before any call: Counts().Calls = %d, want 0 (the last window's calls have left)", w, got)
			}
			if w == ratioIn {
				do(breaker.Success, 2)
				do(breaker.Failure, 2) // 2 of 4: the ratio
				if b.State() != breaker.Open {
					t.Fatalf("window %d: State() = %v after 2 failures of 4 calls, want open; counts %+v", w, b.State(), b.Counts())
				}
				break
			}
			do(breaker.Success, 100)
			do(breaker.Failure, 1)
			if c := b.Counts(); c.Calls != 101 || c.Failures != 1 || b.State() != breaker.Closed {
				t.Fatalf("window %d: counts %+v, state %v; want 101 calls, 1 failure, closed", w, c, b.State())
			}
		}
	}
}
