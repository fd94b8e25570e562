package telemetry_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Goroutines that count the first events of new (name, type) pairs at
// once lose none: one that waits while another adds a pair counts on it.
func TestCounterConcurrentFirstEvents(t *testing.T) {
	const keys, goroutines = 2000, 4
	names := make([]string, keys)
	for i := range names {
		names[i] = fmt.Sprint("n", i)
	}
	c := telemetry.NewCounter()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			<-start
			for _, name := range names { // the same new pairs, in the same order
				c.Observe(telemetry.Event{Type: breaker.EventRefused, Name: name})
			}
		})
	}
	close(start)
	wg.Wait()
	for _, name := range names {
		if got := c.Count(name, breaker.EventRefused); got != goroutines {
			t.Fatalf("Count(%q) = %d, want %d", name, got, goroutines)
		}
	}
}
