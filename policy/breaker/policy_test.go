package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

type invoice struct{ id int }

func TestPolicySharedAcrossResultTypes(t *testing.T) {
	b, _ := newFake(breaker.WithName("billing"), breaker.WithThreshold(2))
	invoices := breaker.Policy[*invoice](b)
	counts := breaker.Policy[int](b)
	if got := invoices.String(); got != "breaker(billing)" {
		t.Fatalf("String() = %q", got)
	}
	ctx := context.Background()
	if _, err := invoices.Do(ctx, func(context.Context) (*invoice, error) { return nil, errBoom }); err != errBoom {
		t.Fatalf("Do = %v", err)
	}
	if _, err := counts.Do(ctx, func(context.Context) (int, error) { return 0, errBoom }); err != errBoom {
		t.Fatalf("Do = %v", err)
	}
	wantState(t, b, breaker.Open)
	ran := false
	_, err := invoices.Do(ctx, func(context.Context) (*invoice, error) { ran = true; return &invoice{1}, nil })
	if !errors.Is(err, breaker.ErrOpen) || !errors.Is(err, resilience.ErrRefused) || ran {
		t.Fatalf("Do on an open breaker = %v (op ran: %v), want ErrOpen without running", err, ran)
	}
	if d, ok := resilience.RetryAfter(err); !ok || d != 30*time.Second {
		t.Fatalf("RetryAfter = %v, %v", d, ok)
	}
}

func TestPolicyUnnamedLayer(t *testing.T) {
	if got := breaker.Policy[int](breaker.New()).String(); got != "breaker" {
		t.Fatalf("String() = %q", got)
	}
}

func TestPolicyCountsOutcomes(t *testing.T) {
	inner := resilience.New("inner-guard", func(context.Context, resilience.Next[int]) (int, error) {
		return 0, fmt.Errorf("bulkhead full: %w", resilience.ErrRefused)
	})
	b, _ := newFake(breaker.WithThreshold(100))
	p := breaker.Policy[int](b)
	ctx := context.Background()
	do := func(err error) {
		t.Helper()
		if _, got := p.Do(ctx, func(context.Context) (int, error) { return 1, err }); got != err {
			t.Fatalf("Do = %v, want %v", got, err)
		}
	}
	do(nil)
	do(errBoom)
	do(context.DeadlineExceeded)              // the dependency did not answer in time
	do(fmt.Errorf("x: %w", context.Canceled)) // canceled: ignored
	if _, err := p.Then(inner).Do(ctx, func(context.Context) (int, error) { return 1, nil }); !errors.Is(err, resilience.ErrRefused) {
		t.Fatalf("Do through a refusing inner guard = %v", err)
	}
	wantCounts(t, b, breaker.Counts{Calls: 3, Successes: 1, Failures: 2, FailureRatio: 2.0 / 3, ConsecutiveFailures: 2})
}

func TestPolicyIgnoresTheCallersCancellation(t *testing.T) {
	b, _ := newFake(breaker.WithThreshold(1))
	p := breaker.Policy[int](b)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := p.Do(ctx, func(context.Context) (int, error) {
		cancel()
		return 0, errBoom // not a wrapped context.Canceled: the caller gave up all the same
	})
	if err != errBoom {
		t.Fatalf("Do = %v", err)
	}
	wantState(t, b, breaker.Closed)
	wantCounts(t, b, breaker.Counts{})
}

func TestPolicyDoesNotCallWithADoneContext(t *testing.T) {
	b, _ := newFake(breaker.WithThreshold(1))
	p := breaker.Policy[int](b)
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	ran := false
	if _, err := p.Do(ctx, func(context.Context) (int, error) { ran = true; return 0, ctx.Err() }); err != context.DeadlineExceeded || ran {
		t.Fatalf("Do = %v (op ran: %v), want DeadlineExceeded without running", err, ran)
	}
	wantCounts(t, b, breaker.Counts{})
	wantState(t, b, breaker.Closed)
}

func TestPolicyPanicCountsAsFailureAndPropagates(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(1), breaker.WithClassify(func(error) breaker.Outcome { return breaker.Ignored }))
	p := breaker.Policy[int](b)
	type value struct{ n int }
	pv := &value{1}
	func() {
		defer func() {
			if r := recover(); r != pv {
				t.Fatalf("recover() = %v, want the op's own panic value", r)
			}
		}()
		_, _ = p.Do(context.Background(), func(context.Context) (int, error) { panic(pv) })
	}()
	wantState(t, b, breaker.Open) // a failure, whatever the classifier says of errors
	// A panicking trial releases its slot: the breaker reopens, and
	// admits a trial again after the next cooldown.
	f.Advance(30 * time.Second)
	func() {
		defer func() { _ = recover() }()
		_, _ = p.Do(context.Background(), func(context.Context) (int, error) { panic(pv) })
	}()
	wantState(t, b, breaker.Open)
	f.Advance(30 * time.Second)
	if _, err := p.Do(context.Background(), func(context.Context) (int, error) { return 1, nil }); err != nil {
		t.Fatal(err)
	}
	wantState(t, b, breaker.Closed)
}

func TestPolicyUsesTheClassifier(t *testing.T) {
	errNotFound := errors.New("not found")
	b, _ := newFake(breaker.WithThreshold(1), breaker.WithClassify(func(err error) breaker.Outcome {
		if errors.Is(err, errNotFound) {
			return breaker.Success // the dependency answered
		}
		return breaker.DefaultClassify(err)
	}))
	p := breaker.Policy[int](b)
	_, _ = p.Do(context.Background(), func(context.Context) (int, error) { return 0, fmt.Errorf("get: %w", errNotFound) })
	wantCounts(t, b, breaker.Counts{Calls: 1, Successes: 1, ConsecutiveSuccesses: 1})
}

func TestPolicyNilBreakerPanics(t *testing.T) {
	defer func() {
		if r := recover(); r != "breaker: Policy breaker must not be nil" {
			t.Fatalf("panic = %v", r)
		}
	}()
	breaker.Policy[int](nil)
}

func TestPolicyClosedPathDoesNotAllocate(t *testing.T) {
	p := breaker.Policy[int](breaker.New())
	op := func(context.Context) (int, error) { return 1, nil }
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() { _, _ = p.Do(ctx, op) }); n != 0 {
		t.Fatalf("Do allocates %v times", n)
	}
}
