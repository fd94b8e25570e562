package eventlog_test

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/internal/eventlog"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

var _ telemetry.Observer = (*eventlog.Recorder)(nil)

func ev(typ telemetry.Type, attempt int) telemetry.Event {
	return telemetry.Event{Type: typ, Name: "db", Attempt: attempt}
}

func TestTakeReturnsInOrderAndClears(t *testing.T) {
	var r eventlog.Recorder
	if got := r.Take(); got != nil {
		t.Fatalf("Take on a new Recorder = %v, want nil", got)
	}
	r.Observe(ev(retry.EventAttemptFailed, 1))
	r.Observe(ev(retry.EventWaiting, 1))
	want := []telemetry.Event{ev(retry.EventAttemptFailed, 1), ev(retry.EventWaiting, 1)}
	if diff := cmp.Diff(want, r.Take()); diff != "" {
		t.Errorf("first Take mismatch (-want +got):\n%s", diff)
	}
	if got := r.Take(); got != nil {
		t.Errorf("second Take = %v, want nil (the first Take clears)", got)
	}
	r.Observe(ev(retry.EventGaveUp, 2))
	if diff := cmp.Diff([]telemetry.Event{ev(retry.EventGaveUp, 2)}, r.Take()); diff != "" {
		t.Errorf("Take after a new event mismatch (-want +got):\n%s", diff)
	}
}

func TestAllKeepsAndCopies(t *testing.T) {
	var r eventlog.Recorder
	if got := r.All(); got != nil {
		t.Fatalf("All on a new Recorder = %v, want nil", got)
	}
	r.Observe(ev(hedge.EventLaunched, 2))
	got := r.All()
	got[0].Name = "changed" // must not reach the Recorder
	want := []telemetry.Event{ev(hedge.EventLaunched, 2)}
	if diff := cmp.Diff(want, r.All()); diff != "" {
		t.Errorf("All after changing its result mismatch (-want +got):\n%s", diff)
	}
	r.Observe(ev(hedge.EventWon, 2))
	want = append(want, ev(hedge.EventWon, 2))
	if diff := cmp.Diff(want, r.All()); diff != "" {
		t.Errorf("All keeps nothing back mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, r.Take()); diff != "" {
		t.Errorf("Take after All mismatch (-want +got):\n%s", diff)
	}
	if got := r.All(); got != nil {
		t.Errorf("All after Take = %v, want nil", got)
	}
}

// Observe from many goroutines loses no event (and, under -race, races
// with nothing).
func TestConcurrentObserve(t *testing.T) {
	const goroutines, each = 8, 100
	var r eventlog.Recorder
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				r.Observe(ev(bulkhead.EventRefused, g*each+i))
				_ = r.All()
			}
		})
	}
	wg.Wait()
	got := r.Take()
	if len(got) != goroutines*each {
		t.Fatalf("recorded %d events, want %d", len(got), goroutines*each)
	}
	seen := make(map[int]bool, len(got))
	for _, e := range got {
		seen[e.Attempt] = true
	}
	if len(seen) != goroutines*each {
		t.Errorf("recorded %d distinct events, want %d", len(seen), goroutines*each)
	}
}
