package retry_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/retry"
)

// countingBudget is a Budgeter of a test's own: it counts what the policy
// asks, and grants the first allow retries.
type countingBudget struct {
	deposits, withdrawals atomic.Int64
	allow                 int64
}

func (b *countingBudget) Deposit() { b.deposits.Add(1) }

func (b *countingBudget) Withdraw() bool { return b.withdrawals.Add(1) <= b.allow }

// A Budgeter of one's own is asked as a Budget is: one Deposit per
// execution (however many attempts), one Withdraw before each retry, and
// a denied retry gives up with ErrBudgetExhausted.
func TestBudgeterOfOwn(t *testing.T) {
	b := &countingBudget{allow: 3}
	p := retry.New[int](retry.WithBudget(b), retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0)))
	var calls int
	op := func(context.Context) (int, error) { calls++; return calls, errBoom }
	_, err := p.Do(context.Background(), op) // 3 attempts: 2 withdrawals, both granted
	if !errors.Is(err, retry.ErrAttempts) {
		t.Fatalf("first Do: err = %v, want ErrAttempts", err)
	}
	_, err = p.Do(context.Background(), op) // the 3rd withdrawal granted, the 4th denied
	if !errors.Is(err, retry.ErrBudgetExhausted) || !errors.Is(err, errBoom) {
		t.Fatalf("second Do: err = %v, want ErrBudgetExhausted wrapping errBoom", err)
	}
	if _, err := p.Do(context.Background(), func(context.Context) (int, error) { return 1, nil }); err != nil {
		t.Fatal(err)
	}
	type counts struct{ Deposits, Withdrawals, Calls int64 }
	want := counts{Deposits: 3, Withdrawals: 4, Calls: 5}
	got := counts{b.deposits.Load(), b.withdrawals.Load(), int64(calls)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("budget use mismatch (-want +got):\n%s", diff)
	}
}

// A context already done deposits nothing, whatever the Budgeter.
func TestBudgeterDoneContextDepositsNothing(t *testing.T) {
	b := &countingBudget{}
	p := retry.New[int](retry.WithBudget(b))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Do(ctx, func(context.Context) (int, error) { return 1, nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := b.deposits.Load(); n != 0 {
		t.Errorf("deposits = %d, want 0", n)
	}
}

// A nil *Budget given to WithBudget (or in Config.Budget) is no budget, as
// it was when WithBudget took a *Budget: it is not a Budgeter to call.
func TestNilBudgetIsNoBudget(t *testing.T) {
	var nb *retry.Budget
	for name, p := range map[string]resilience.Policy[int]{
		"WithBudget": retry.New[int](retry.WithBudget(nb), retry.WithBackoff(backoff.Constant(0))),
		"WithConfig": retry.New[int](retry.WithConfig(retry.Config{Budget: nb}), retry.WithBackoff(backoff.Constant(0))),
	} {
		s := &script{errs: []error{errBoom, errBoom}}
		if v, err := p.Do(context.Background(), s.op); err != nil || v != 103 {
			t.Errorf("%s: Do = %d, %v; want 103, nil (no budget: every retry)", name, v, err)
		}
	}
}

// nilPtrBudget is a Budgeter of the test's own whose methods read through
// the pointer: a nil one panics if the policy calls it.
type nilPtrBudget struct{ n int }

func (b *nilPtrBudget) Deposit()       { b.n++ }
func (b *nilPtrBudget) Withdraw() bool { b.n++; return true }

// Any Budgeter that is a nil pointer (not only a nil *Budget) given to
// WithBudget or in Config.Budget is no budget: the policy never calls it,
// and retries as it would with none.
func TestTypedNilBudgeterIsNoBudget(t *testing.T) {
	var nb *nilPtrBudget
	for name, p := range map[string]resilience.Policy[int]{
		"WithBudget": retry.New[int](retry.WithBudget(nb), retry.WithBackoff(backoff.Constant(0))),
		"WithConfig": retry.New[int](retry.WithConfig(retry.Config{Budget: nb}), retry.WithBackoff(backoff.Constant(0))),
	} {
		s := &script{errs: []error{errBoom, errBoom}}
		if v, err := p.Do(context.Background(), s.op); err != nil || v != 103 {
			t.Errorf("%s: Do = %d, %v; want 103, nil (no budget: every retry)", name, v, err)
		}
	}
}

// A policy with a Budgeter of its own does not allocate on success: the
// interface call costs none.
func TestSuccessWithBudgeterDoesNotAllocate(t *testing.T) {
	p := retry.New[int](retry.WithBudget(&countingBudget{}))
	op := func(context.Context) (int, error) { return 1, nil }
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() { _, _ = p.Do(ctx, op) }); n != 0 {
		t.Errorf("%v allocs per successful call, want 0", n)
	}
}

// denyAll is a Budgeter that is a plain value, not a pointer: it denies
// every retry.
type denyAll struct{}

func (denyAll) Deposit()       {}
func (denyAll) Withdraw() bool { return false }

// A Budgeter that is a value (no pointer to be nil) is a budget like any
// other: it is asked, and its denial ends the retries.
func TestValueBudgeterIsABudget(t *testing.T) {
	p := retry.New[int](retry.WithBudget(denyAll{}), retry.WithBackoff(backoff.Constant(0)))
	s := &script{errs: []error{errBoom, errBoom}}
	if _, err := p.Do(context.Background(), s.op); !errors.Is(err, retry.ErrBudgetExhausted) {
		t.Errorf("Do: err = %v, want ErrBudgetExhausted (the value budget denies every retry)", err)
	}
}
