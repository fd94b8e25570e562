package resilience_test

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
)

// described returns a one-layer policy named name that passes calls on,
// described by d.
func described(name string, d resilience.Layer) resilience.Policy[int] {
	return resilience.New(name, pass).Describe(d)
}

// Bounds at the edge of int64: a sum or a product of exactly MaxInt64 is
// a bound; one more is none, said so, never a wrapped number.
func TestBoundsAtTheEdgeOfInt64(t *testing.T) {
	const maxNs = time.Duration(math.MaxInt64)
	const half = math.MaxInt64 / 2 // 2 × half = MaxInt64 - 1
	hang := func(wait time.Duration) resilience.Policy[int] {
		return described("hang", resilience.Layer{Kind: resilience.KindOther, MaxWait: wait})
	}
	deadline := described("deadline", resilience.Layer{Kind: resilience.KindTimeout, Timeout: maxNs - 1})
	to1ns := described("to", resilience.Layer{Kind: resilience.KindTimeout, Timeout: 1})
	retry := func(name string, n int) resilience.Policy[int] {
		return described(name, resilience.Layer{Kind: resilience.KindRetry, Attempts: n})
	}
	longer := "longer than " + maxNs.String()
	for _, tc := range []struct {
		name string
		p    resilience.Policy[int]
		want resilience.Bounds
	}{
		{"a wait and a timeout that add up to MaxInt64",
			resilience.Then(hang(1), deadline),
			resilience.Bounds{Calls: 1, Duration: maxNs}},
		{"a wait and a timeout that add up to one more",
			resilience.Then(hang(2), deadline),
			resilience.Bounds{Calls: 1, DurationUnbounded: longer}},
		// inner: half calls of 1ns, half - 1 waits of 0: half ns; outer:
		// twice that, and one wait of 0.
		{"retries whose product is MaxInt64 - 1",
			resilience.Then(retry("outer", 2), retry("inner", half), to1ns),
			resilience.Bounds{Calls: 2 * half, Duration: 2 * half}},
		{"retries whose product overflows",
			resilience.Then(retry("outer", 2), retry("inner", half+1), to1ns),
			resilience.Bounds{CallsUnbounded: "more than 9223372036854775807", DurationUnbounded: longer}},
	} {
		if diff := cmp.Diff(tc.want, tc.p.Bounds()); diff != "" {
			t.Errorf("%s: Bounds(%s) mismatch (-want +got):\n%s", tc.name, tc.p, diff)
		}
	}
}

// A retry whose Attempts is Off and that has no MaxElapsed bounds neither
// the calls nor the duration, and says why.
func TestBoundsRetryAttemptsOffWithoutMaxElapsed(t *testing.T) {
	p := resilience.Then(described("mine", resilience.Layer{Kind: resilience.KindRetry, Attempts: resilience.Off}), timeoutP())
	want := resilience.Bounds{CallsUnbounded: "mine: Attempts Off, and a wait may be 0", DurationUnbounded: "mine: Attempts Off and no MaxElapsed"}
	if diff := cmp.Diff(want, p.Bounds()); diff != "" {
		t.Errorf("Bounds(%s) mismatch (-want +got):\n%s", p, diff)
	}
}

// A retry of one attempt never waits: its MaxWait, even Off, does not
// count.
func TestBoundsRetryOfOneAttemptNeverWaits(t *testing.T) {
	p := resilience.Then(described("once", resilience.Layer{Kind: resilience.KindRetry, Attempts: 1, MaxWait: resilience.Off}), timeoutP())
	if diff := cmp.Diff(resilience.Bounds{Calls: 1, Duration: time.Second}, p.Bounds()); diff != "" {
		t.Errorf("Bounds(%s) mismatch (-want +got):\n%s", p, diff)
	}
}

// A MaxElapsed of 1ns bounds a retry's waits to 1ns.
func TestBoundsRetryShortestMaxElapsed(t *testing.T) {
	p := resilience.Then(described("r", resilience.Layer{Kind: resilience.KindRetry, Attempts: 3, MaxWait: time.Second, MaxElapsed: 1}), timeoutP())
	if diff := cmp.Diff(resilience.Bounds{Calls: 3, Duration: time.Second + 1}, p.Bounds()); diff != "" {
		t.Errorf("Bounds(%s) mismatch (-want +got):\n%s", p, diff)
	}
}

// A hedge whose delay has no upper bound, over an op with no timeout:
// the duration is unbounded, and the reason names the hedge, the
// outermost layer that leaves it unbounded.
func TestBoundsHedgeWithUnboundedDelayOverNoTimeout(t *testing.T) {
	p := described("h", resilience.Layer{Kind: resilience.KindHedge, Attempts: 2, Delay: resilience.Off})
	want := resilience.Bounds{Calls: 2, DurationUnbounded: "h: a delay with no upper bound"}
	if diff := cmp.Diff(want, p.Bounds()); diff != "" {
		t.Errorf("Bounds(%s) mismatch (-want +got):\n%s", p, diff)
	}
}
