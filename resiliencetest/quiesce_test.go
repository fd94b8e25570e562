package resiliencetest

import (
	"testing"

	"github.com/f0b5b96b/resilience/internal/goroutines"
)

func TestCurrentGoroutineIsInTheSnapshot(t *testing.T) {
	id := goroutines.Current()
	if id == 0 {
		t.Fatal("goroutines.Current() = 0")
	}
	p := &pipeline{}
	found := false
	for _, g := range p.snapshot() {
		if g.ID == id {
			found = true
		}
	}
	if !found {
		t.Fatalf("goroutine %d, the caller, is not in the snapshot", id)
	}
}
