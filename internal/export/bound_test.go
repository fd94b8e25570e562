package export

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBound: the first max values of a group keep their value, later ones
// read Other, whatever the other groups hold; a value admitted reads as
// itself ever after.
func TestBound(t *testing.T) {
	var b Bound[string]
	var got []string
	for _, v := range []string{"a", "b", "c", "a", "d", "b"} {
		got = append(got, b.Of(2, "g", v))
	}
	got = append(got, b.Of(2, "h", "c"), b.Of(2, "h", "d"), b.Of(2, "h", "e"))
	want := []string{"a", "b", Other, "a", Other, "b", "c", "d", Other}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Of mismatch (-want +got):\n%s", diff)
	}
}

// TestBoundZero: a max below 1 admits nothing.
func TestBoundZero(t *testing.T) {
	var b Bound[int]
	if got := b.Of(0, 1, "a"); got != Other {
		t.Errorf("Of(0, ...) = %q, want %q", got, Other)
	}
}

// TestBoundAllocs: reading a value admitted before, or any value of a full
// group, allocates nothing.
func TestBoundAllocs(t *testing.T) {
	var b Bound[int]
	b.Of(1, 1, "a")
	b.Of(1, 1, "b") // the group is full
	for _, v := range []string{"a", "b", "c"} {
		if n := testing.AllocsPerRun(100, func() { b.Of(1, 1, v) }); n != 0 {
			t.Errorf("Of(%q): %v allocs, want 0", v, n)
		}
	}
}
