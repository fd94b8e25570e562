package resilienceotel

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBound: the first max values of a group keep their value, later ones
// read "_OTHER", whatever the other groups hold; a value admitted reads as
// itself ever after.
func TestBound(t *testing.T) {
	b := bound[string]{max: 2}
	var got []string
	for _, v := range []string{"a", "b", "c", "a", "d", "b"} {
		got = append(got, b.of("g", v))
	}
	got = append(got, b.of("h", "c"), b.of("h", "d"), b.of("h", "e"))
	want := []string{"a", "b", "_OTHER", "a", "_OTHER", "b", "c", "d", "_OTHER"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bound mismatch (-want +got):\n%s", diff)
	}
}

// TestErrorTypesBounded: past maxErrorTypes distinct error types, a
// Metrics reports "_OTHER".
func TestErrorTypesBounded(t *testing.T) {
	m := &Metrics{}
	m.errs.max = maxErrorTypes
	for i := range maxErrorTypes {
		if got, want := m.errs.of(struct{}{}, fmt.Sprint("type", i)), fmt.Sprint("type", i); got != want {
			t.Fatalf("type %d reads %q", i, got)
		}
	}
	if got := m.errs.of(struct{}{}, "one too many"); got != other {
		t.Errorf("type past the bound reads %q, want %q", got, other)
	}
}
