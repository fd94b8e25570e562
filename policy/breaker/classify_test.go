package breaker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

func TestDefaultClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		want breaker.Outcome
	}{
		{nil, breaker.Success},
		{errBoom, breaker.Failure},
		{fmt.Errorf("op: %w", errBoom), breaker.Failure},
		{context.DeadlineExceeded, breaker.Failure},
		{context.Canceled, breaker.Ignored},
		{fmt.Errorf("get: %w", context.Canceled), breaker.Ignored},
		{resilience.ErrRefused, breaker.Ignored},
		{fmt.Errorf("bulkhead: %w", resilience.ErrRefused), breaker.Ignored},
		{breaker.ErrOpen, breaker.Ignored},
		{breaker.ErrTooManyTrials, breaker.Ignored},
	} {
		if got := breaker.DefaultClassify(c.err); got != c.want {
			t.Errorf("DefaultClassify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestClassifierSeesWrappedErrors(t *testing.T) {
	var seen []error
	b, _ := newFake(breaker.WithThreshold(1), breaker.WithClassify(func(err error) breaker.Outcome {
		seen = append(seen, err)
		return breaker.DefaultClassify(err)
	}))
	wrapped := fmt.Errorf("layer: %w", fmt.Errorf("inner: %w", context.Canceled))
	p, _ := b.Allow()
	p.Done(wrapped)
	p2, _ := b.Allow()
	p2.Done(nil) // not classified
	if len(seen) != 1 || seen[0] != wrapped {
		t.Fatalf("classifier saw %v, want only the wrapped error as returned", seen)
	}
	wantState(t, b, breaker.Closed)
	wantCounts(t, b, breaker.Counts{Calls: 1, Successes: 1, ConsecutiveSuccesses: 1})
}

func TestOutcomeString(t *testing.T) {
	for o, want := range map[breaker.Outcome]string{
		breaker.Success: "success", breaker.Failure: "failure", breaker.Ignored: "ignored", 9: "Outcome(9)",
	} {
		if got := o.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", o, got, want)
		}
	}
}

func TestStateString(t *testing.T) {
	for s, want := range map[breaker.State]string{
		breaker.Closed: "closed", breaker.Open: "open", breaker.HalfOpen: "half-open", 7: "State(7)",
	} {
		if got := s.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", s, got, want)
		}
	}
}

// recovered runs f and returns what it panicked with.
func recovered(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

func TestClassifyReturningAnInvalidOutcomePanics(t *testing.T) {
	const want = `breaker: Classify outcome must be Success, Failure or Ignored, got 7 (for error "boom")`
	classify := breaker.WithClassify(func(error) breaker.Outcome { return 7 })
	b, _ := newFake(breaker.WithThreshold(1), classify)
	p, _ := b.Allow()
	if r := recovered(func() { p.Done(errBoom) }); r != want {
		t.Fatalf("Done panicked with %v, want %q", r, want)
	}
	policy := breaker.Policy[int](b)
	if r := recovered(func() {
		_, _ = policy.Do(context.Background(), func(context.Context) (int, error) { return 0, errBoom })
	}); r != want {
		t.Fatalf("Do panicked with %v, want %q", r, want)
	}
	wantState(t, b, breaker.Closed) // counted neither way
	wantCounts(t, b, breaker.Counts{})

	// A half-open trial whose outcome cannot be classified is released.
	b, f := newFake(breaker.WithThreshold(1), classify)
	policy = breaker.Policy[int](b)
	b.Record(true)
	f.Advance(30 * time.Second)
	trial, _ := b.Allow()
	if r := recovered(func() { trial.Done(errBoom) }); r != want {
		t.Fatalf("Done panicked with %v, want %q", r, want)
	}
	wantState(t, b, breaker.HalfOpen)
	if r := recovered(func() {
		_, _ = policy.Do(context.Background(), func(context.Context) (int, error) { return 0, errBoom })
	}); r != want {
		t.Fatalf("Do panicked with %v, want %q", r, want)
	}
	wantState(t, b, breaker.HalfOpen)
	wantCounts(t, b, breaker.Counts{})
	succeed(t, b, f, 1) // the slot is free
	wantState(t, b, breaker.Closed)
}

func TestPanickingClassifierReleasesTheTrial(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1), breaker.WithClassify(func(error) breaker.Outcome { panic("classify") }))
	b.Record(true)
	f.Advance(30 * time.Second)
	trial, _ := b.Allow()
	if r := recovered(func() { trial.Done(errBoom) }); r != "classify" {
		t.Fatalf("Done panicked with %v, want the classifier's panic", r)
	}
	succeed(t, b, f, 1) // the slot is free
	wantState(t, b, breaker.Closed)
}
