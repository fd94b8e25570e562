package resilienceredis

import (
	"errors"
	"testing"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/google/go-cmp/cmp"
)

// brTrialPermit makes fake's shared state open past its cooldown and
// returns a half-open trial permit of b, which fake admits.
func brTrialPermit(t *testing.T, b *Breaker, f *brFake) *Permit {
	t.Helper()
	f.set(func(script string, _ []any) ([]any, error) {
		if script == "acquire" {
			return brReply(7, 3, 2, 0, 2), nil // half-open, trial admitted
		}
		return brReply(7, 2, 1, 0, 0), nil // open, cooldown over
	})
	b.sync()
	p, err := b.Allow()
	if err != nil {
		t.Fatalf("Allow of an open breaker past its cooldown: %v, want a trial", err)
	}
	if p.member == "" {
		t.Fatal("the permit is not a trial")
	}
	return &p
}

// queued returns the trial reports b has queued for its flusher.
func brQueued(b *Breaker) []int {
	var out []int
	for {
		select {
		case r := <-b.reports:
			out = append(out, r.o)
		default:
			return out
		}
	}
}

// A permit reports its outcome exactly once: a second Done or Report of
// a closed call's permit adds nothing to the batch, and the zero Permit
// reports nothing (and does not panic).
func TestPermitReportsOnce(t *testing.T) {
	b, _ := brFakeBreaker(t, WithThreshold(10))
	b.sync()
	p, err := b.Allow()
	if err != nil {
		t.Fatal(err)
	}
	p.Done(errBoom)
	p.Done(errBoom)
	p.Report(breaker.Failure)
	if b.batch.n != 1 || b.batch.fail != 1 {
		t.Errorf("one permit reported three times: batch of %d outcomes, %d failures; want 1, 1", b.batch.n, b.batch.fail)
	}
	var zero Permit
	zero.Done(errBoom)
	zero.Report(breaker.Success)
	if b.batch.n != 1 {
		t.Errorf("the zero Permit's reports changed the batch: %d outcomes, want 1", b.batch.n)
	}
}

// A half-open trial's permit queues one report for the flusher, whether
// the call reports with Done or Report, and a second report queues
// nothing: success 0, failure 1.
func TestPermitTrialQueuesOneReport(t *testing.T) {
	b, f := brFakeBreaker(t, WithThreshold(1), WithMaxTrials(2))
	p := brTrialPermit(t, b, f)
	p.Done(nil)
	p.Done(errBoom)
	if diff := cmp.Diff([]int{0}, brQueued(b)); diff != "" {
		t.Errorf("trial reports after Done(nil), Done(err) mismatch (-want +got):\n%s", diff)
	}
	p = brTrialPermit(t, b, f)
	p.Report(breaker.Failure)
	p.Report(breaker.Success)
	if diff := cmp.Diff([]int{1}, brQueued(b)); diff != "" {
		t.Errorf("trial reports after Report(Failure), Report(Success) mismatch (-want +got):\n%s", diff)
	}
}

// A Classify that panics on a trial's error: the panic goes on to the
// caller, and the permit releases what it holds: the trial's place in
// this instance and in the fleet (an ignored report), so that the next
// call can be a trial instead of waiting TrialTimeout.
func TestPermitClassifyPanicReleasesTrial(t *testing.T) {
	errOdd := errors.New("odd")
	b, f := brFakeBreaker(t, WithThreshold(1), WithMaxTrials(1), WithClassify(func(error) breaker.Outcome { panic(errOdd) }))
	p := brTrialPermit(t, b, f)
	func() {
		defer func() {
			if r := recover(); r != errOdd {
				t.Errorf("Done with a panicking Classify: recovered %v, want the Classify's panic", r)
			}
		}()
		p.Done(errBoom)
	}()
	if diff := cmp.Diff([]int{2}, brQueued(b)); diff != "" {
		t.Errorf("trial reports after a panicking Classify mismatch (-want +got):\n%s", diff)
	}
	if _, err := b.Allow(); err != nil {
		t.Errorf("Allow after the trial was released (MaxTrials 1): %v, want another trial", err)
	}
}

// Classify must return Success, Failure or Ignored: another outcome
// panics, with a message that names it and the error.
func TestPermitClassifyOutOfRangePanics(t *testing.T) {
	b, _ := brFakeBreaker(t, WithThreshold(10), WithClassify(func(error) breaker.Outcome { return breaker.Outcome(7) }))
	b.sync()
	p, err := b.Allow()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		want := `resilienceredis: Classify outcome must be Success, Failure or Ignored, got 7 (for error "boom")`
		if r := recover(); r != want {
			t.Errorf("Done with Classify returning 7: recovered %v, want %q", r, want)
		}
		if b.batch.n != 0 {
			t.Errorf("the outcome out of range counted: batch of %d", b.batch.n)
		}
	}()
	p.Done(errBoom)
}

// BreakerPolicy of a nil breaker panics, saying so.
func TestBreakerPolicyOfNilPanics(t *testing.T) {
	defer func() {
		if r := recover(); r != "resilienceredis: BreakerPolicy breaker must not be nil" {
			t.Errorf("BreakerPolicy(nil): recovered %v, want its own message", r)
		}
	}()
	BreakerPolicy[int](nil)
}
