package adaptive_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// With a reserve, each priority is admitted up to its own ceiling:
// ⌈limit × (1 − Reserve)⌉ for Normal, ⌈limit × (1 − Reserve)²⌉ for Low,
// the limit for Critical.
func TestReserveCeilings(t *testing.T) {
	tests := []struct {
		limit                 int
		reserve               float64
		low, normal, critical int
	}{
		{10, 0.2, 7, 8, 10},
		{10, 0, 10, 10, 10},
		{1, 0.5, 1, 1, 1},
		{3, 0.5, 1, 2, 3},
		{100, 0.1, 81, 90, 100},
	}
	for _, tt := range tests {
		got := map[adaptive.Priority]int{}
		for _, p := range []adaptive.Priority{adaptive.Low, adaptive.Normal, adaptive.Critical} {
			lim := adaptive.New(adaptive.WithInitial(tt.limit), adaptive.WithMinLimit(tt.limit), adaptive.WithMaxLimit(tt.limit), adaptive.WithReserve(tt.reserve))
			ctx := adaptive.ContextWithPriority(context.Background(), p)
			for got[p] <= tt.limit { // one more than the limit fails the test
				if _, err := lim.Acquire(ctx); err != nil {
					break
				}
				got[p]++
			}
		}
		want := map[adaptive.Priority]int{adaptive.Low: tt.low, adaptive.Normal: tt.normal, adaptive.Critical: tt.critical}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("limit %d, Reserve %v: calls admitted per priority mismatch (-want +got):\n%s", tt.limit, tt.reserve, diff)
		}
	}
}

// Critical traffic is shed last: with the limit taken by normal calls up
// to their ceiling, critical calls still get in.
func TestCriticalCallsShedLast(t *testing.T) {
	lim := adaptive.New(adaptive.WithInitial(10), adaptive.WithMinLimit(10), adaptive.WithMaxLimit(10), adaptive.WithReserve(0.3))
	normal, critical := context.Background(), adaptive.ContextWithPriority(context.Background(), adaptive.Critical)
	admitted := func(ctx context.Context, n int) int {
		got := 0
		for range n {
			if _, err := lim.Acquire(ctx); err == nil {
				got++
			}
		}
		return got
	}
	if got := admitted(normal, 20); got != 7 {
		t.Fatalf("20 normal calls: %d admitted, want 7", got)
	}
	if got := admitted(critical, 5); got != 3 {
		t.Fatalf("then 5 critical calls: %d admitted, want 3", got)
	}
}

func TestPriorityString(t *testing.T) {
	got := fmt.Sprint(adaptive.Low, adaptive.Normal, adaptive.Critical, adaptive.Priority(5))
	if diff := cmp.Diff("low normal critical Priority(5)", got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("adaptive: ContextWithPriority priority must be Low, Normal or Critical, got Priority(2)",
		panicOf(func() { adaptive.ContextWithPriority(context.Background(), 2) })); diff != "" {
		t.Errorf("panic mismatch (-want +got):\n%s", diff)
	}
}

// panicOf returns what f panics with, or "" if it returns.
func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}
