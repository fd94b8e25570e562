package exporttest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// inGoroutine runs f with tb on a goroutine of its own, as a test would
// (fakeTB's Fatal ends the goroutine), and waits for it.
func inGoroutine(tb *fakeTB, f func(tb *fakeTB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(tb)
	}()
	<-done
}

var sink []byte

// TestClosedPathAllocsFails: ClosedPathAllocs marks itself a helper,
// reports a policy that allocates with the count, and stops at a call
// that fails, with its error.
func TestClosedPathAllocsFails(t *testing.T) {
	allocating := resilience.New("alloc", func(ctx context.Context, next resilience.Next[int]) (int, error) {
		sink = make([]byte, 64)
		return next.Call(ctx)
	})
	tb := &fakeTB{}
	inGoroutine(tb, func(tb *fakeTB) { exporttest.ClosedPathAllocs(tb, allocating) })
	if len(tb.errors) != 1 || !strings.Contains(tb.errors[0], "1 allocs per call, want 0") || tb.failed != "" {
		t.Errorf("errors %q, fatal %q; want one error counting 1 alloc a call", tb.errors, tb.failed)
	}
	if !slices.Contains(tb.helpers, "exporttest.ClosedPathAllocs") {
		t.Errorf("ClosedPathAllocs did not call Helper; the helpers were %q", tb.helpers)
	}
	failing := resilience.New("down", func(context.Context, resilience.Next[int]) (int, error) { return 0, errors.New("down") })
	tb = &fakeTB{}
	inGoroutine(tb, func(tb *fakeTB) { exporttest.ClosedPathAllocs(tb, failing) })
	if tb.failed != "down" {
		t.Errorf("a failing call: fatal %q, want %q", tb.failed, "down")
	}
}

// TestObserveAllocsFails: ObserveAllocs marks itself a helper and reports
// each event its observer allocates for, by type.
func TestObserveAllocsFails(t *testing.T) {
	refused := exporttest.Refused()
	obs := telemetry.ObserverFunc(func(e telemetry.Event) {
		if e.Type == refused.Type {
			sink = make([]byte, 64)
		}
	})
	tb := &fakeTB{}
	all := exporttest.AllTypes(downError{})
	inGoroutine(tb, func(tb *fakeTB) { exporttest.ObserveAllocs(tb, obs, all...) })
	var want []string
	for _, e := range all {
		if e.Type == refused.Type {
			want = append(want, fmt.Sprintf("Observe(%s): 1 allocs, want 0", e.Type))
		}
	}
	if len(want) == 0 || !slices.Equal(tb.errors, want) {
		t.Errorf("errors %q, want %q", tb.errors, want)
	}
	if !slices.Contains(tb.helpers, "exporttest.ObserveAllocs") {
		t.Errorf("ObserveAllocs did not call Helper; the helpers were %q", tb.helpers)
	}
}
