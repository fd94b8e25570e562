package retry_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/retry"
)

// budgetRun runs one execution that fails its first attempt and succeeds on
// a retry, and reports whether the retry was allowed.
func budgetRun(t *testing.T, b *retry.Budget) bool {
	t.Helper()
	s := &script{errs: []error{errBoom}}
	clk := newSleeper() // the policy's own: the budget's clock is b's
	p := retry.New[int](retry.WithBudget(b), retry.WithBackoff(backoff.Constant(0)), retry.WithClock(clk))
	v, err := p.Do(context.Background(), s.op)
	if s.calls > 1 && len(clk.slept) == 0 {
		// The policy waited on another clock than its own (WithClock):
		// the real one, where every later test and example would sleep
		// for real, for up to 1000s. End the test binary rather than let
		// them hang (go test's -failfast stops the tests after a
		// failure, not the examples).
		panic(t.Name() + ": the retry did not wait on the policy's clock (WithClock)")
	}
	for _, d := range clk.slept {
		if d != 0 {
			t.Fatalf("the retry waited %v, want no wait with a Backoff of Constant(0)", d)
		}
	}
	if err == nil {
		return true
	}
	if !errors.Is(err, retry.ErrBudgetExhausted) || !errors.Is(err, errBoom) || v != 1 {
		t.Fatalf("Do = %d, %v; want 1 and an error matching ErrBudgetExhausted and errBoom", v, err)
	}
	if want := "retry: gave up after 1 attempt (retry budget exhausted): boom"; err.Error() != want {
		t.Fatalf("err = %q, want %q", err, want)
	}
	return false
}

func budgetRuns(t *testing.T, b *retry.Budget, n int) []bool {
	got := make([]bool, n)
	for i := range got {
		got[i] = budgetRun(t, b)
	}
	return got
}

// BudgetConfig{} is Finagle's default budget: Ratio 0.2, MinPerSecond 10,
// Window 10s. With no time passing, n executions allow min(n, 0.2n + 100)
// retries: the first 125 are granted, the 126th is not; the window keeps
// them for 10 s (at least 9 s), then lets them go.
func TestBudgetDefaults(t *testing.T) {
	clk := clock.NewFake()
	b := retry.NewBudget(retry.BudgetConfig{Clock: clk})
	want := make([]bool, 126)
	for i := range 125 {
		want[i] = true
	}
	if diff := cmp.Diff(want, budgetRuns(t, b, 126)); diff != "" {
		t.Errorf("retries allowed mismatch (-want +got):\n%s", diff)
	}
	clk.Advance(9 * time.Second)
	if diff := cmp.Diff([]bool{false}, budgetRuns(t, b, 1)); diff != "" {
		t.Errorf("at 9s: retries allowed mismatch (-want +got):\n%s", diff)
	}
	clk.Advance(time.Second)
	if diff := cmp.Diff([]bool{true}, budgetRuns(t, b, 1)); diff != "" {
		t.Errorf("at 10s: retries allowed mismatch (-want +got):\n%s", diff)
	}
}

func TestBudgetRatio(t *testing.T) {
	b := retry.NewBudget(retry.BudgetConfig{Ratio: 0.5, MinPerSecond: resilience.Off, Window: time.Minute, Clock: clock.NewFake()})
	// Execution k is counted before it asks: k executions allow k/2 retries.
	want := []bool{false, true, false, true, false, true}
	if diff := cmp.Diff(want, budgetRuns(t, b, 6)); diff != "" {
		t.Errorf("retries allowed mismatch (-want +got):\n%s", diff)
	}
}

func TestBudgetFloor(t *testing.T) {
	clk := clock.NewFake()
	b := retry.NewBudget(retry.BudgetConfig{Ratio: resilience.Off, MinPerSecond: 1, Window: 2 * time.Second, Clock: clk})
	if diff := cmp.Diff([]bool{true, true, false}, budgetRuns(t, b, 3)); diff != "" {
		t.Errorf("retries allowed mismatch (-want +got):\n%s", diff)
	}
	clk.Advance(2 * time.Second) // the window has slid past those retries
	if diff := cmp.Diff([]bool{true, true, false}, budgetRuns(t, b, 3)); diff != "" {
		t.Errorf("after the window: retries allowed mismatch (-want +got):\n%s", diff)
	}
}

func TestBudgetWindowSlides(t *testing.T) {
	clk := clock.NewFake()
	b := retry.NewBudget(retry.BudgetConfig{Ratio: 0.1, MinPerSecond: resilience.Off, Window: 10 * time.Second, Clock: clk})
	ok := retry.New[int](retry.WithBudget(b))
	for range 20 {
		if _, err := ok.Do(context.Background(), func(context.Context) (int, error) { return 0, nil }); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(9900 * time.Millisecond)
	// 21 executions in the window allow 2.1 retries.
	if diff := cmp.Diff([]bool{true}, budgetRuns(t, b, 1)); diff != "" {
		t.Errorf("at 9.9s: retries allowed mismatch (-want +got):\n%s", diff)
	}
	clk.Advance(1100 * time.Millisecond)
	// At 11s the 20 executions of t=0 have left the window (their bucket
	// has not been reused yet): 2 executions and 1 retry are in it; with
	// them, 22 executions would have allowed 2 retries.
	if diff := cmp.Diff([]bool{false}, budgetRuns(t, b, 1)); diff != "" {
		t.Errorf("at 11s: retries allowed mismatch (-want +got):\n%s", diff)
	}
}

func TestBudgetIsSharedAcrossResultTypes(t *testing.T) {
	b := retry.NewBudget(retry.BudgetConfig{Ratio: resilience.Off, MinPerSecond: 1, Window: time.Second, Clock: clock.NewFake()})
	ints := retry.New[int](retry.WithBudget(b), retry.WithBackoff(backoff.Constant(0)))
	strs := retry.New[string](retry.WithBudget(b), retry.WithBackoff(backoff.Constant(0)))
	n := 0
	if _, err := ints.Do(context.Background(), func(context.Context) (int, error) {
		if n++; n == 1 {
			return 0, errBoom
		}
		return n, nil
	}); err != nil {
		t.Fatalf("first retry denied: %v", err)
	}
	_, err := strs.Do(context.Background(), func(context.Context) (string, error) { return "", errBoom })
	if !errors.Is(err, retry.ErrBudgetExhausted) {
		t.Errorf("second policy's retry: err = %v, want ErrBudgetExhausted (the floor of 1 is spent)", err)
	}
}

func TestBudgetUnderConcurrency(t *testing.T) {
	b := retry.NewBudget(retry.BudgetConfig{Ratio: 0.25, MinPerSecond: resilience.Off, Window: time.Minute, Clock: clock.NewFake()})
	p := retry.New[int](retry.WithBudget(b), retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(0)))
	var attempts atomic.Int64
	const executions = 400
	var wg sync.WaitGroup
	for range executions {
		wg.Go(func() {
			_, _ = p.Do(context.Background(), func(context.Context) (int, error) {
				attempts.Add(1)
				return 0, errBoom
			})
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%d executions did not all end within 10s", executions)
	}
	if retries := attempts.Load() - executions; retries > executions/4 {
		t.Errorf("%d retries granted for %d executions, want at most %d", retries, executions, executions/4)
	}
}

// Regression: a Window near math.MaxInt64 passed
// Validate, and the bucket width, rounded up past the largest Duration,
// came out negative: once time moved past it, the budget indexed its
// ring with a negative slot and panicked.
func TestBudgetHugeWindow(t *testing.T) {
	for _, w := range []time.Duration{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 - 8, math.MaxInt64 - 9} {
		clk := clock.NewFake()
		b := retry.NewBudget(retry.BudgetConfig{Ratio: 0.5, MinPerSecond: 1, Window: w, Clock: clk})
		var got []bool
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("Window %d: panic after %d executions: %v", int64(w), len(got), r)
				}
			}()
			for range 40 {
				got = append(got, budgetRun(t, b))
				clk.Advance(10_000 * time.Hour) // 46 years in all: past a bucket (Window/10, 29 years)
			}
		}()
		// The window never slides in that time: the floor (MinPerSecond
		// × Window, huge) allows every retry.
		for i, ok := range got {
			if !ok {
				t.Errorf("Window %d: retry %d denied, want every retry allowed by the floor", int64(w), i+1)
			}
		}
	}
}

// A bucket reused for a later slot of time (here at t = Window, the slot of
// t = 0 again) starts from zero: the executions and retries of its old slot
// no longer count, whether the slot is renewed by an execution's count or by
// a retry's request.
func TestBudgetReusedBucketForgetsItsOldCounts(t *testing.T) {
	clk := clock.NewFake()
	b := retry.NewBudget(retry.BudgetConfig{Ratio: 0.5, MinPerSecond: resilience.Off, Window: 10 * time.Second, Clock: clk})
	ok := retry.New[int](retry.WithBudget(b))
	for range 20 {
		if _, err := ok.Do(context.Background(), func(context.Context) (int, error) { return 0, nil }); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]bool{true}, budgetRuns(t, b, 1)); diff != "" {
		t.Errorf("at 0s: retries allowed mismatch (-want +got):\n%s", diff)
	}
	clk.Advance(10 * time.Second)
	// Only the executions counted from 10s on: k executions allow k/2 retries.
	if diff := cmp.Diff([]bool{false, true, false, true}, budgetRuns(t, b, 4)); diff != "" {
		t.Errorf("at 10s: retries allowed mismatch (-want +got):\n%s", diff)
	}
}

// The same, when the bucket is renewed by successful executions before any
// retry asks: they are all counted in the new slot.
func TestBudgetExecutionsRenewTheirBucket(t *testing.T) {
	clk := clock.NewFake()
	b := retry.NewBudget(retry.BudgetConfig{Ratio: 0.25, MinPerSecond: resilience.Off, Window: 10 * time.Second, Clock: clk})
	ok := retry.New[int](retry.WithBudget(b))
	succeed := func(n int) {
		t.Helper()
		for range n {
			if _, err := ok.Do(context.Background(), func(context.Context) (int, error) { return 0, nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	succeed(4)
	clk.Advance(10 * time.Second)
	succeed(3)
	// From 10s on, 4 executions allow 1 retry, 5 still 1; the 4 of t = 0
	// have left the window.
	if diff := cmp.Diff([]bool{true, false}, budgetRuns(t, b, 2)); diff != "" {
		t.Errorf("at 10s: retries allowed mismatch (-want +got):\n%s", diff)
	}
}

// The window slides in steps of Window/10 rounded up: an execution counts for
// at least 9/10 of the Window and for no more than the Window, also when the
// Window is not a multiple of 10 ns (19 ns: steps of 2 ns).
func TestBudgetWindowNotAMultipleOfTen(t *testing.T) {
	for _, tc := range []struct {
		at   time.Duration
		want bool
	}{{17, true}, {19, true}, {20, false}} {
		clk := clock.NewFake()
		b := retry.NewBudget(retry.BudgetConfig{Ratio: 0.5, MinPerSecond: resilience.Off, Window: 19, Clock: clk})
		ok := retry.New[int](retry.WithBudget(b))
		for range 20 {
			if _, err := ok.Do(context.Background(), func(context.Context) (int, error) { return 0, nil }); err != nil {
				t.Fatal(err)
			}
		}
		clk.Advance(tc.at)
		// Counted, the 20 executions of t = 0 allow the retry; alone, the
		// retrying execution does not.
		if got := budgetRun(t, b); got != tc.want {
			t.Errorf("at %v: retry allowed = %v, want %v", tc.at, got, tc.want)
		}
	}
}

// The window's first slot starts at the budget's creation: with a Window of
// 10 ns (steps of 1 ns), the executions of t = 0 count until 9 ns and are gone
// at 10 ns.
func TestBudgetFirstSlotStartsAtCreation(t *testing.T) {
	for _, tc := range []struct {
		at   time.Duration
		want bool
	}{{9, true}, {10, false}} {
		clk := clock.NewFake()
		b := retry.NewBudget(retry.BudgetConfig{Ratio: 0.5, MinPerSecond: resilience.Off, Window: 10, Clock: clk})
		ok := retry.New[int](retry.WithBudget(b))
		for range 20 {
			if _, err := ok.Do(context.Background(), func(context.Context) (int, error) { return 0, nil }); err != nil {
				t.Fatal(err)
			}
		}
		clk.Advance(tc.at)
		if got := budgetRun(t, b); got != tc.want {
			t.Errorf("at %v: retry allowed = %v, want %v", tc.at, got, tc.want)
		}
	}
}
