package exporttest_test

import (
	"context"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/internal/export"
	"github.com/f0b5b96b/resilience/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// TestErrorTypes: each case's error has the error.type the case gives
// (as internal/export reads it), and no refusal among them carries a
// hint.
func TestErrorTypes(t *testing.T) {
	for i, c := range exporttest.ErrorTypes(t, downError{}, "exporttest_test.downError") {
		if got := export.ErrorType(c.Err); got != c.Want {
			t.Errorf("%d: ErrorType(%v) = %q, want %q", i, c.Err, got, c.Want)
		}
		if d, ok := resilience.RetryAfter(c.Err); ok {
			t.Errorf("%d: %v carries a hint of %v, want none", i, c.Err, d)
		}
	}
}

// TestAllocHelpersPass: the allocation helpers pass a policy and an
// observer that allocate nothing.
func TestAllocHelpersPass(t *testing.T) {
	pass := resilience.New("pass", func(ctx context.Context, next resilience.Next[int]) (int, error) { return next.Call(ctx) })
	exporttest.ClosedPathAllocs(t, pass)
	exporttest.ObserveAllocs(t, telemetry.ObserverFunc(func(telemetry.Event) {}), exporttest.AllTypes(downError{})...)
}
