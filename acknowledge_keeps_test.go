package resilience_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// Acknowledge adds codes to a layer's description and keeps the rest of
// it: the kind and settings that Check and Bounds read. A layer without a
// description gets one with the codes only. Acknowledge and Layers walk
// the layers, and end (the package's first test: a chain whose layer is
// linked back to itself fails it at once rather than hanging the tests).
func TestAcknowledgeKeepsTheDescription(t *testing.T) {
	var (
		deadline resilience.Policy[int]
		layers   []resilience.Layer
	)
	returns(t, "Acknowledge and Layers of a timeout", func() {
		deadline = timeout.New[int](5 * time.Second).Acknowledge(resilience.TimeoutOutsideRetry)
		layers = deadline.Layers()
	})
	want := []resilience.Layer{{Name: "timeout(5s)", Kind: resilience.KindTimeout, Timeout: 5 * time.Second,
		Acknowledged: []resilience.Code{resilience.TimeoutOutsideRetry}}}
	if diff := cmp.Diff(want, layers); diff != "" {
		t.Errorf("Layers after Acknowledge mismatch (-want +got):\n%s", diff)
	}
	// The other codes of the layer are still reported, and its bound holds.
	p := resilience.Then(deadline, queuedBulkheadP())
	if diff := cmp.Diff([]resilience.Code{resilience.TimeoutOutsideLimiter}, codes(p.Check())); diff != "" {
		t.Errorf("Check(%s) mismatch (-want +got):\n%s", p, diff)
	}
	if got := p.Bounds().Duration; got != 5*time.Second {
		t.Errorf("Bounds(%s).Duration = %v, want 5s", p, got)
	}
	mine := resilience.New("mine", pass).Acknowledge(resilience.RetryInsideRetry)
	if diff := cmp.Diff([]resilience.Layer{{Name: "mine", Acknowledged: []resilience.Code{resilience.RetryInsideRetry}}}, mine.Layers()); diff != "" {
		t.Errorf("Layers of an acknowledged undescribed layer mismatch (-want +got):\n%s", diff)
	}
}
