package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

func TestPolicyCallersDeadlineMidCallIsAFailure(t *testing.T) {
	// The caller's deadline passes while the dependency is working: the
	// dependency did not answer in time, so the call is a failure (unlike
	// the caller's cancellation), and such calls trip the breaker. Both
	// paths of the adapter: the closed fast path, and the measured one
	// (SlowCall set). In a synctest bubble: the deadline and the breaker's
	// default real clock run on virtual time, and a hang is reported at
	// once.
	for _, c := range []struct {
		name string
		opts []breaker.Option
	}{
		{"fast path", nil},
		{"measured", []breaker.Option{breaker.WithSlowCall(time.Hour)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				var trips []breaker.Transition
				b := breaker.New(append(c.opts, breaker.WithThreshold(2),
					breaker.WithOnStateChange(func(tr breaker.Transition) { trips = append(trips, tr) }))...)
				p := breaker.Policy[int](b)
				for i, wrap := range []func(error) error{
					func(err error) error { return err },
					func(err error) error { return fmt.Errorf("rpc: %w", err) },
				} {
					ctx, cancel := context.WithTimeout(context.Background(), time.Second)
					start := time.Now()
					_, err := p.Do(ctx, func(ctx context.Context) (int, error) {
						<-ctx.Done() // the dependency answers only when the caller gives up
						return 0, wrap(ctx.Err())
					})
					cancel()
					if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
						t.Fatalf("call %d: Do = %v after %v, want DeadlineExceeded after 1s", i, err, time.Since(start))
					}
				}
				if s := b.State(); s != breaker.Open {
					t.Fatalf("State() = %v after two calls past the caller's deadline, want open", s)
				}
				want := []breaker.Transition{{From: breaker.Closed, To: breaker.Open, Generation: 2, At: time.Now(),
					Counts: breaker.Counts{Calls: 2, Failures: 2, FailureRatio: 1, ConsecutiveFailures: 2}}}
				if diff := cmp.Diff(want, trips); diff != "" {
					t.Fatalf("transitions mismatch (-want +got):\n%s", diff)
				}
				ran := false
				if _, err := p.Do(context.Background(), func(context.Context) (int, error) { ran = true; return 1, nil }); !errors.Is(err, breaker.ErrOpen) || ran {
					t.Fatalf("Do on the tripped breaker = %v (op ran: %v), want ErrOpen", err, ran)
				}
			})
		})
	}
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
