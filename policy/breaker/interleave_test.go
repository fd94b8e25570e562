package breaker_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// These tests replay a manual control (Reset, ForceOpen) that lands
// between two steps of a call's admission or report: hookClock runs it
// from inside the breaker's next reading of the clock, the instant
// between the breaker's first look at its state and the lock it then
// takes. Each then checks that the breaker is not left locked. The calls
// run under a bound (within, do): a call that read the clock only under
// its lock would wait for ever on the control the hook runs.

// hookClock is a fake clock that runs a hook, once, from a reading of
// the time.
type hookClock struct {
	*clock.Fake
	hook atomic.Pointer[func()]
}

func (c *hookClock) Now() time.Time {
	if f := c.hook.Swap(nil); f != nil {
		(*f)()
	}
	return c.Fake.Now()
}

// at arms f to run from the next reading of the clock.
func (c *hookClock) at(f func()) { c.hook.Store(&f) }

func newHooked(opts ...breaker.Option) (*breaker.Breaker, *hookClock) {
	c := &hookClock{Fake: clock.NewFake()}
	return breaker.New(append([]breaker.Option{breaker.WithClock(c)}, opts...)...), c
}

// counts reads b's counts, failing the test if b's lock was left held.
func counts(t *testing.T, b *breaker.Breaker) breaker.Counts {
	t.Helper()
	return within(t, "Counts (the breaker's lock)", b.Counts)
}

// A call that finds the breaker open, and then closed by a Reset before it
// takes the lock, is admitted in the closed state: its outcome counts.
func TestResetWhileAdmittingAdmitsTheCall(t *testing.T) {
	b, c := newHooked(breaker.WithThreshold(2), breaker.WithCooldown(time.Minute))
	b.Record(true)
	b.Record(true)
	if got := b.State(); got != breaker.Open {
		t.Fatalf("State() = %v after two failures at threshold 2, want open", got)
	}
	c.at(b.Reset)
	var p breaker.Permit
	var err error
	do(t, "Allow across a Reset", func() { p, err = b.Allow() })
	if err != nil {
		t.Fatalf("Allow() across a Reset = %v, want admitted", err)
	}
	if got := counts(t, b); got != (breaker.Counts{}) {
		t.Fatalf("Counts() after the Reset = %+v, want zero", got)
	}
	p.Done(errBoom)
	want := breaker.Counts{Calls: 1, Failures: 1, FailureRatio: 1, ConsecutiveFailures: 1}
	if diff := cmp.Diff(want, counts(t, b)); diff != "" {
		t.Errorf("Counts() after the call's failure: mismatch (-want +got):\n%s", diff)
	}
}

// A call that finds the breaker open, and then forced open before it takes
// the lock, is refused as by a forced-open breaker: ErrForcedOpen, never
// to be retried.
func TestForceOpenWhileAdmittingRefusesAsForced(t *testing.T) {
	b, c := newHooked(breaker.WithThreshold(1), breaker.WithCooldown(time.Minute))
	b.Record(true)
	c.at(b.ForceOpen)
	var err error
	do(t, "Allow across a ForceOpen", func() { _, err = b.Allow() })
	var r *resilience.RefusedError
	if !errors.As(err, &r) || r == nil || !errors.Is(err, breaker.ErrForcedOpen) {
		t.Fatalf("Allow() across a ForceOpen = %v, want a refusal matching ErrForcedOpen", err)
	}
	if got := r.RetryAfter(); got != resilience.Never {
		t.Errorf("RetryAfter() = %v, want Never", got)
	}
	if got := counts(t, b).Refused; got != 1 {
		t.Errorf("Counts().Refused = %d, want 1", got)
	}
}

// A failure whose report is overtaken by a Reset (the report reads the
// clock, to time the call, before it takes the lock) belongs to the
// generation before the Reset: it counts nothing after it.
func TestResetWhileReportingAFailureDropsIt(t *testing.T) {
	b, c := newHooked(breaker.WithSlowCall(time.Second))
	p, err := b.Allow()
	if err != nil {
		t.Fatal(err)
	}
	c.at(b.Reset)
	do(t, "Done across a Reset", func() { p.Done(errBoom) })
	if got := counts(t, b); got != (breaker.Counts{}) {
		t.Errorf("Counts() = %+v after a failure reported across a Reset, want zero", got)
	}
}

// A half-open trial reported after its TrialTimeout, before anything else
// noticed the expiry, has expired: the breaker is open again, whatever the
// report says.
func TestTrialReportedAfterItsExpiryCountsNothing(t *testing.T) {
	for _, o := range []breaker.Outcome{breaker.Success, breaker.Failure} {
		t.Run(o.String(), func(t *testing.T) {
			b, c := newHooked(breaker.WithThreshold(1), breaker.WithCooldown(time.Minute),
				breaker.WithTrialTimeout(10*time.Second))
			b.Record(true)
			c.Advance(time.Minute)
			p, err := b.Allow()
			if err != nil {
				t.Fatalf("Allow() after the cooldown = %v, want a trial", err)
			}
			c.Advance(10 * time.Second)
			do(t, "Report of an expired trial", func() { p.Report(o) })
			st := within(t, "Stats (the breaker's lock)", b.Stats)
			if st.State != breaker.Open || st.CooldownLeft != time.Minute {
				t.Errorf("Stats() = state %v, cooldown left %v after the trial expired, want open for a fresh minute",
					st.State, st.CooldownLeft)
			}
		})
	}
}

// State, finding the breaker open before its cooldown's end and then
// closed by a Reset before it decides, reads the new state.
func TestResetWhileReadingTheStateReadsClosed(t *testing.T) {
	b, c := newHooked(breaker.WithThreshold(1), breaker.WithCooldown(time.Minute))
	b.Record(true)
	c.at(b.Reset)
	if got := within(t, "State (the breaker's lock)", b.State); got != breaker.Closed {
		t.Errorf("State() across a Reset = %v, want closed", got)
	}
}

// A failure is slow by the time the breaker counts it: a report that
// reads the clock before the lock and again under it judges the call's
// duration at the second reading, the time its counts (and a transition
// it makes) are dated. Here the clock passes SlowCall while the report
// takes the lock.
func TestFailureSlowByTheTimeItIsCounted(t *testing.T) {
	b, c := newHooked(breaker.WithSlowCall(time.Second), breaker.WithThreshold(2))
	p, err := b.Allow()
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Second) // not slow yet: a duration of exactly SlowCall
	// The report's first reading (at 1s) arms a hook for its reading
	// under the lock, which moves the clock to 2s.
	c.at(func() { c.at(func() { c.Advance(time.Second) }) })
	do(t, "Done of a failure", func() { p.Done(errBoom) })
	want := breaker.Counts{Calls: 1, Failures: 1, Slow: 1, FailureRatio: 1, ConsecutiveFailures: 1}
	if diff := cmp.Diff(want, counts(t, b)); diff != "" {
		t.Errorf("Counts() after a failure that took 2s by its count: mismatch (-want +got):\n%s", diff)
	}
}
