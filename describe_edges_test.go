package resilience_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
)

// Describe takes every description at the edge of what is valid, and
// panics, naming the field and the value, on one just past it.
func TestDescribeValidatesAtTheEdges(t *testing.T) {
	mine := resilience.New("mine", pass)
	for _, d := range []resilience.Layer{
		{Kind: resilience.KindRetry, Attempts: 1},
		{Kind: resilience.KindRetry, Attempts: resilience.Off, MaxElapsed: time.Second},
		{Kind: resilience.KindHedge, Attempts: 1},
		{Kind: resilience.KindTimeout, Timeout: 1},
		{Kind: resilience.KindOther, MaxWait: resilience.Off},
		{Kind: resilience.KindOther, MaxElapsed: 0, MaxWait: 0, Delay: 0},
		{Kind: resilience.KindHedge, Attempts: 2, Delay: resilience.Off},
	} {
		if got := panicOf(func() { mine.Describe(d) }); got != "" {
			t.Errorf("Describe(%+v) panicked with %q, want it valid", d, got)
		}
	}
	for _, tc := range []struct {
		d    resilience.Layer
		want string
	}{
		{resilience.Layer{Kind: resilience.KindHedge, Attempts: 0}, "resilience: Describe(mine): Attempts must be >= 1 for a hedge, got 0"},
		{resilience.Layer{Kind: resilience.KindTimeout, Timeout: -1}, "resilience: Describe(mine): Timeout must be > 0 for a timeout, got -1ns"},
		{resilience.Layer{Kind: resilience.KindRetry, Attempts: 1, MaxElapsed: -1}, "resilience: Describe(mine): MaxElapsed must be >= 0, got -1ns"},
		{resilience.Layer{Kind: resilience.KindOther, MaxWait: -1 - time.Nanosecond}, "resilience: Describe(mine): MaxWait must be >= 0 or Off, got -2ns"},
		{resilience.Layer{Kind: resilience.KindHedge, Attempts: 2, Delay: -2}, "resilience: Describe(mine): Delay must be >= 0 or Off, got -2ns"},
	} {
		if got := panicOf(func() { mine.Describe(tc.d) }); got != tc.want {
			t.Errorf("Describe(%+v) panicked with %q, want %q", tc.d, got, tc.want)
		}
	}
}

// A description is the policy's own: changing the slice given to
// Describe, or the one Layers returned, changes no policy.
func TestDescribeAndLayersCopyAcknowledged(t *testing.T) {
	acks := []resilience.Code{resilience.TimeoutOutsideRetry}
	deadline := resilience.New("deadline", pass).Describe(resilience.Layer{Kind: resilience.KindTimeout, Timeout: time.Second, Acknowledged: acks})
	p := resilience.Then(deadline, retryP())
	acks[0] = resilience.RetryInsideRetry
	if fs := p.Check(); len(fs) != 0 {
		t.Errorf("after the caller's slice changed, Check(%s) = %v, want none", p, fs)
	}
	ls := p.Layers()
	ls[0].Acknowledged[0] = resilience.RetryInsideRetry
	if fs := p.Check(); len(fs) != 0 {
		t.Errorf("after a slice Layers returned changed, Check(%s) = %v, want none", p, fs)
	}
	if diff := cmp.Diff([]resilience.Code{resilience.TimeoutOutsideRetry}, p.Layers()[0].Acknowledged); diff != "" {
		t.Errorf("Layers()[0].Acknowledged mismatch (-want +got):\n%s", diff)
	}
}
