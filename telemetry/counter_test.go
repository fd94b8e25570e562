package telemetry_test

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

func TestCounter(t *testing.T) {
	var c telemetry.Counter // the zero Counter is ready
	if got := c.Counts(); got != nil {
		t.Fatalf("Counts() of a new Counter = %v, want nil", got)
	}
	for _, e := range []telemetry.Event{
		{Type: breaker.EventRefused, Name: "db"},
		{Type: breaker.EventRefused, Name: "db"},
		{Type: breaker.EventOpened, Name: "db"},
		{Type: retry.EventGaveUp, Name: ""},
		{Type: ratelimit.EventRefused, Name: "api", Key: "alice"},
		{Type: ratelimit.EventRefused, Name: "api", Key: "bob"}, // keys count together
		{Type: breaker.EventRefused, Name: "cache"},
	} {
		c.Observe(e)
	}
	want := []telemetry.Count{
		{Name: "", Type: retry.EventGaveUp, N: 1},
		{Name: "api", Type: ratelimit.EventRefused, N: 2},
		{Name: "cache", Type: breaker.EventRefused, N: 1},
		{Name: "db", Type: breaker.EventOpened, N: 1},
		{Name: "db", Type: breaker.EventRefused, N: 2},
	}
	if diff := cmp.Diff(want, c.Counts()); diff != "" {
		t.Fatalf("Counts() mismatch (-want +got):\n%s", diff)
	}
	for _, w := range want {
		if got := c.Count(w.Name, w.Type); got != w.N {
			t.Errorf("Count(%q, %q) = %d, want %d", w.Name, w.Type, got, w.N)
		}
	}
	if got := c.Count("db", breaker.EventClosed); got != 0 {
		t.Errorf("Count of an unseen pair = %d, want 0", got)
	}
}

func TestCounterConcurrent(t *testing.T) {
	c := telemetry.NewCounter()
	types := []telemetry.Type{breaker.EventRefused, breaker.EventFailure, retry.EventWaiting}
	names := []string{"a", "b", "c", "d"}
	const goroutines, each = 8, 500
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				c.Observe(telemetry.Event{Type: types[(g+i)%len(types)], Name: names[i%len(names)]})
			}
		})
	}
	wg.Wait()
	var total uint64
	for _, n := range c.Counts() {
		total += n.N
	}
	if total != goroutines*each {
		t.Fatalf("counted %d events, want %d", total, goroutines*each)
	}
	if got := len(c.Counts()); got != len(types)*len(names) {
		t.Fatalf("%d counts, want %d", got, len(types)*len(names))
	}
}

func TestCounterDoesNotAllocateOnAKnownKey(t *testing.T) {
	c := telemetry.NewCounter()
	e := telemetry.Event{Type: breaker.EventRefused, Name: "db"}
	c.Observe(e)
	if n := testing.AllocsPerRun(1000, func() { c.Observe(e) }); n != 0 {
		t.Fatalf("counting a known key allocates %v times", n)
	}
	if got := c.Count("db", breaker.EventRefused); got != 1002 {
		t.Fatalf("Count = %d, want 1002", got)
	}
}

func BenchmarkCounter(b *testing.B) {
	c := telemetry.NewCounter()
	e := telemetry.Event{Type: breaker.EventRefused, Name: "db"}
	c.Observe(e)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.Observe(e)
		}
	})
}
