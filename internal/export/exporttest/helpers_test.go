package exporttest_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
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

// TestOKAndBreaker: OK succeeds with 1; Breaker registers the breaker "b"
// in reg and returns its policy, and fails tb if reg refuses it.
func TestOKAndBreaker(t *testing.T) {
	if v, err := exporttest.OK(context.Background()); v != 1 || err != nil {
		t.Fatalf("OK() = %d, %v; want 1, nil", v, err)
	}
	reg := telemetry.NewRegistry()
	p := exporttest.Breaker(t, nop, reg)
	if v, err := p.Do(context.Background(), exporttest.OK); v != 1 || err != nil {
		t.Fatalf("through the breaker: %d, %v; want 1, nil", v, err)
	}
	if s := reg.Snapshots(); len(s) != 1 || s[0].Name != "b" {
		t.Fatalf("registered %+v, want the breaker b", s)
	}
	tb := &fakeTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		exporttest.Breaker(tb, nop, reg) // "b" again: refused
	}()
	<-done
	if !strings.Contains(tb.failed, `breaker "b"`) {
		t.Fatalf("Breaker failed with %q, want the registry's refusal of breaker \"b\"", tb.failed)
	}
	if !slices.Contains(tb.helpers, "exporttest.Breaker") {
		t.Fatalf("Breaker did not call Helper before it failed; the helpers were %q", tb.helpers)
	}
}

// TestHelpersMarkThemselves: Outage, its calls, ErrorTypes and the
// functions it makes its errors with call tb.Helper, so that a failure
// names the line of the test that called them.
func TestHelpersMarkThemselves(t *testing.T) {
	tb := &fakeTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		exporttest.Outage(tb, clock.NewFake(), telemetry.NewRegistry(), nop, layer("call", pass), layer("attempt", pass), downError{})
		exporttest.ErrorTypes(tb, downError{}, "exporttest_test.downError")
	}()
	<-done
	if tb.failed != "" {
		t.Fatalf("failed: %s", tb.failed)
	}
	got := map[string]bool{}
	for _, h := range tb.helpers {
		got[h] = true
	}
	for _, want := range []string{"exporttest.Outage", "exporttest.ErrorTypes", "exporttest.timeoutErr", "exporttest.retryErr"} {
		if !got[want] {
			t.Errorf("%s did not call Helper; the helpers were %q", want, slices.Compact(slices.Sorted(maps.Keys(got))))
		}
	}
	calls := 0 // Outage's do: one for each of the script's six calls
	for _, h := range tb.helpers {
		if strings.HasPrefix(h, "exporttest.Outage.func") {
			calls++
		}
	}
	if calls != 6 {
		t.Errorf("Outage's calls marked themselves helpers %d times, want 6; the helpers were %q", calls, tb.helpers)
	}
}
