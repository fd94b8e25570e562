package exporttest_test

import (
	"context"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

type downError struct{}

func (downError) Error() string { return "down" }

// TestAllTypes: AllTypes holds each event type that the built-in
// policies declare (read from their events.go files) once; down where the
// dependency's error goes (the retry's failed attempt and wait, the
// fallback), and no Name. A type added to one of those files fails this
// test until AllTypes has it.
func TestAllTypes(t *testing.T) {
	var want []string
	for _, fn := range []string{
		"../../../policy/breaker/events.go", "../../../policy/retry/events.go",
		"../../../policy/timeout/events.go", "../../../policy/hedge/events.go",
		"../../../policy/bulkhead/events.go", "../../../policy/ratelimit/events.go",
		"../../../events.go",
	} {
		src, err := os.ReadFile(fn)
		if err != nil {
			t.Fatal(err)
		}
		n := len(want)
		for _, m := range regexp.MustCompile(`(?m)^\t\w+\s+telemetry\.Type = "([^"]+)"`).FindAllSubmatch(src, -1) {
			want = append(want, string(m[1]))
		}
		if len(want) == n {
			t.Fatalf("no event types found in %s", fn)
		}
	}
	var got []string
	downs := 0
	for _, e := range exporttest.AllTypes(downError{}) {
		got = append(got, string(e.Type))
		if e.Name != "" {
			t.Errorf("%s: Name %q, want none", e.Type, e.Name)
		}
		if e.Err == (downError{}) {
			downs++
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("event types mismatch (-want +got):\n%s", diff)
	}
	if downs != 3 {
		t.Errorf("%d events carry down, want 3", downs)
	}
}

// TestAllTypesEvicted: AllTypes' breaker.evicted is the event a
// breaker.Keyed emits (but its Name) when it forgets the open breaker of
// key "k" to make room for a new key.
func TestAllTypesEvicted(t *testing.T) {
	var got []telemetry.Event
	k := breaker.NewKeyed[string](breaker.WithName("x"), breaker.WithMaxKeys(1), breaker.WithThreshold(1),
		breaker.WithObserver(telemetry.ObserverFunc(func(e telemetry.Event) {
			if e.Type == breaker.EventEvicted {
				got = append(got, e)
			}
		})))
	k.Breaker("k").Record(true) // the threshold of 1: it opens
	k.Breaker("other")          // no closed breaker to forget: "k" goes
	var want []telemetry.Event
	for _, e := range exporttest.AllTypes(downError{}) {
		if e.Type == breaker.EventEvicted {
			e.Name = "x"
			want = append(want, e)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("breaker.evicted mismatch (-AllTypes +Keyed):\n%s", diff)
	}
}

// TestOutage: the scripted outage, through layers that only pass the call
// on, makes the events its doc describes, and registers the breaker and
// the two fake guards.
func TestOutage(t *testing.T) {
	clk := clock.NewFake()
	reg := telemetry.NewRegistry()
	got := make(map[telemetry.Type]int)
	obs := telemetry.ObserverFunc(func(e telemetry.Event) {
		if e.Name != "prices" {
			t.Errorf("%s from %q, want prices", e.Type, e.Name)
		}
		got[e.Type]++
	})
	pass := func(name string) resilience.Policy[string] {
		return resilience.New(name, func(ctx context.Context, next resilience.Next[string]) (string, error) { return next.Call(ctx) })
	}
	if failed := runOutage(t, clk, reg, obs, pass("call"), pass("attempt")); failed != "" {
		t.Fatalf("Outage failed: %s", failed)
	}
	want := map[telemetry.Type]int{
		breaker.EventFailure:     2, // the two attempts of the failing call
		breaker.EventOpened:      1,
		breaker.EventRefused:     1,
		breaker.EventHalfOpened:  1,
		breaker.EventClosed:      1,
		retry.EventAttemptFailed: 3, // two down, one refused
		retry.EventWaiting:       1, // between the failing call's attempts
		retry.EventGaveUp:        2, // out of attempts; the refusal's hint past MaxWait
		retry.EventAttempt:       7, // four successes, two down, one refused
		retry.EventCall:          6,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	var guards []string
	for _, s := range reg.Snapshots() {
		guards = append(guards, string(s.Kind)+" "+s.Name)
	}
	slices.Sort(guards)
	if diff := cmp.Diff([]string{"breaker prices", "bulkhead db", "ratelimit api"}, guards); diff != "" {
		t.Errorf("registered guards mismatch (-want +got):\n%s", diff)
	}
}
