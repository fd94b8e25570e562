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
