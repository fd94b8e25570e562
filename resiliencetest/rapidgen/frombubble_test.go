package rapidgen

import (
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// rapidFailure returns the value rapid panics with when a property fails
// (t.Fatal), recovered before rapid sees it.
func rapidFailure(t *testing.T) any {
	t.Helper()
	p := rapid.Custom(func(rt *rapid.T) (p any) {
		defer func() { p = recover() }()
		_ = rapid.Int().Draw(rt, "n")
		rt.Fatal("fails")
		return nil
	}).Example(0)
	if p == nil {
		t.Fatal("rt.Fatal did not panic")
	}
	return p
}

// raise panics with v and returns what fromBubble makes of it, as
// CheckInBubble's deferred recover does.
func raise(v any) (p any, site uint32) {
	defer func() { p, site = fromBubble(recover()) }()
	panic(v)
}

// TestFromBubble checks what CheckInBubble raises again outside the
// bubble: a panic of the property is wrapped with where in the bubble it
// happened, rapid's failure is raised as it is; both from one of the
// failure sites, below invalidSite.
func TestFromBubble(t *testing.T) {
	boom := errors.New("boom")
	p, site := raise(boom)
	bp, ok := p.(*bubblePanic)
	if !ok || bp.value != boom || !strings.Contains(bp.Error(), "frombubble_test.go:") {
		t.Errorf("fromBubble(boom) = %#v, want boom wrapped with where it was raised", p)
	}
	if site >= invalidSite {
		t.Errorf("fromBubble(boom): site %d, want a failure site below %d", site, invalidSite)
	}

	// A type of one's own named like rapid's out-of-data panic is a panic
	// of the property.
	mine := invalidData("mine")
	if p, site := raise(mine); site >= invalidSite {
		t.Errorf("fromBubble(a type named invalidData of another package) = %#v, site %d; want a failure site", p, site)
	} else if bp, ok := p.(*bubblePanic); !ok || bp.value != any(mine) {
		t.Errorf("fromBubble(a type named invalidData of another package) = %#v, want it wrapped", p)
	}

	failure := rapidFailure(t)
	p, site = raise(failure)
	if p != failure {
		t.Errorf("fromBubble(rapid's failure) = %#v, want it as it is", p)
	}
	if site >= invalidSite {
		t.Errorf("fromBubble(rapid's failure): site %d, want a failure site below %d", site, invalidSite)
	}
}

// invalidData is named as rapid's out-of-data panic value is.
type invalidData string

// raiseNested panics with v from depth nested calls below it, and returns
// what fromBubble makes of it.
func raiseNested(depth int, v any) (any, uint32) {
	if depth == 0 {
		return raise(v)
	}
	return raiseNested(depth-1, v)
}

// TestFromBubbleSitesSpread checks that the failure site follows where in
// the bubble the panic was raised: panics from 16 different stacks do not
// all share one site (they would 1 time in 8^15 if the sites were drawn
// at random), so that rapid tells failures of different places apart.
func TestFromBubbleSitesSpread(t *testing.T) {
	sites := make(map[uint32]bool)
	for depth := range 16 {
		_, site := raiseNested(depth, "boom")
		if site >= invalidSite {
			t.Fatalf("fromBubble of a panic %d calls deep: site %d, want a failure site below %d", depth, site, invalidSite)
		}
		sites[site] = true
	}
	if len(sites) < 2 {
		t.Errorf("panics raised from 16 different stacks all have the failure site %v, want sites that follow the stack", sites)
	}
}
